// The workload of `ntprofctl run`: COMMAND as a child process, and the signals that end a run.
// SIGINT, SIGTERM and SIGHUP are caught for the whole run, so that its session is stopped however
// the run ends; while the workload runs they are passed on to it, unless the terminal sent them
// (Ctrl-C reaches the whole foreground process group, the workload included, already).
#pragma once

#include <string>
#include <vector>

namespace ntprof::cli {

void CatchStopSignals();
// The stop signal caught since CatchStopSignals, or 0.
int CaughtStopSignal();

// Runs command (argv[0] looked up in PATH) and waits for it. Returns its status as a shell gives
// it: the exit code, 128 + the signal that killed it, 127 not found, 126 not executable.
int RunWorkload(const std::vector<std::string>& command);

}  // namespace ntprof::cli
