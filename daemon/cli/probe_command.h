// `ntprofd probe`: the hook plan of this kernel, for a role and transport.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::daemon_cli {

void AddProbeCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::daemon_cli
