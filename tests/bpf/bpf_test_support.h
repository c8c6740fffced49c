// Tests that need the real kernel (BPF loading, block devices) skip with a reason, never pass
// silently, when the machine cannot run them: they exit with kSkipCode, which CTest reports as
// skipped (SKIP_RETURN_CODE).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace ntprof::testing {

inline constexpr int kSkipCode = 77;

inline void SkipUnlessRoot(const char* why) {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: not root; %s\n", why);
    std::exit(kSkipCode);
  }
}

}  // namespace ntprof::testing
