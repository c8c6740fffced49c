// `ntprofctl probe [AGENT]`: which hooks an agent's kernel offers (Agent.Probe).
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddProbeCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
