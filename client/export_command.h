// `ntprofctl export SESSION -o FILE.ntp|DIR`: a session's records as .ntp files.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddExportCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
