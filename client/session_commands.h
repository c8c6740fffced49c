// `ntprofctl start`, `stop` and `status`: sessions on the collector.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddSessionCommands(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
