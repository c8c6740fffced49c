// `ntprofctl compare BASE NEW`: two runs side by side, naming the stage that grew most.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddCompareCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
