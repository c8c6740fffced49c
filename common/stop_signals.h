// The daemons (ntprof-collector, ntprofd serve) stop on SIGINT/SIGTERM taken by sigwait in main,
// not by whichever thread a signal happens to hit: block them before any thread starts.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace ntprof::cli {

// Blocks SIGINT and SIGTERM in this thread and every thread it starts later, ignores SIGPIPE (a
// peer that leaves mid-write), and returns the set for WaitForStopSignal.
inline sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

// The signal that arrived.
inline int WaitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig;
}

}  // namespace ntprof::cli
