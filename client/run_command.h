// `ntprofctl run NAME -- COMMAND...`: a session around a workload, its report, and the regression
// gate against a baseline, in one command for CI labs (docs/ci-labs.md).
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

void AddRunCommand(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
