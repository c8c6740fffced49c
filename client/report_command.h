// `ntprofctl report FILE...`: the joined stage report of recorded .ntp files, with no server.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddReportCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
