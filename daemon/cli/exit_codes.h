// Exit statuses of ntprofd, the same contract as ntprofctl's (client/exit_codes.h).
#pragma once

namespace ntprof::daemon_cli {

inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;    // the work failed (a required hook, load, the output file)
inline constexpr int kBadInput = 2;  // wrong flags

}  // namespace ntprof::daemon_cli
