// `ntprofd record`: record sampled commands of one role into a .ntp file.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::daemon_cli {

void AddRecordCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::daemon_cli
