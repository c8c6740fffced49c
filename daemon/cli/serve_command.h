// `ntprofd serve`: the long-lived agent (Agent service on a unix socket, link to the collector).
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::daemon_cli {

void AddServeCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::daemon_cli
