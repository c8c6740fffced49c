// `ntprofctl watch`: live interval summaries of the whole cluster from the collector.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddWatchCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
