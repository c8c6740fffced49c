// Exit statuses of ntprofctl (every verb) and ntprofd (probe, record, serve): one contract, so
// scripts can tell bad input from a failed run.
#pragma once

namespace ntprof::cli {

inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;     // the work itself failed (I/O, a required hook, the server)
inline constexpr int kBadInput = 2;   // wrong flags, unreadable or inconsistent recordings

}  // namespace ntprof::cli
