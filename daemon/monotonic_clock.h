// The agent's clocks in nanoseconds: CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns() (every
// stamp of a record), CLOCK_REALTIME only labels a recording's start and end.
#pragma once

#include <time.h>

#include <cstdint>

namespace ntprof::agent {

inline uint64_t ClockNs(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace ntprof::agent
