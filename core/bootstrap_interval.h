// How much a statistic changed from BASE to NEW, with a bootstrap confidence interval: the
// regression gate's answer to "is this a real change or sampling noise?".
//
// Each replicate resamples BASE's commands and NEW's commands independently (with replacement,
// as many as each run has) and computes the change of the statistic; the interval is the middle
// `confidence` of the replicates' changes (the percentile bootstrap). The generator is seeded, so
// the same samples give the same interval on every run and machine.
#pragma once

#include <cstdint>
#include <vector>

#include "sample_statistic.h"

namespace ntprof {

struct BootstrapOptions {
  double confidence = 0.95;
  int replicates = 1000;
  uint64_t seed = 1;
};

struct ChangeInterval {
  double base = 0;    // the statistic of BASE's commands (ns)
  double next = 0;    // of NEW's
  double change = 0;  // next - base (ns), or next / base - 1 when relative
  double low = 0;     // the interval of `change`
  double high = 0;
};

// base and next: per-command values (ns), neither empty. Relative changes need base's statistic
// above zero (a stage of 0 ns has no relative change).
ChangeInterval BootstrapChange(std::vector<int64_t> base, std::vector<int64_t> next,
                               Statistic statistic, bool relative, const BootstrapOptions& options);

}  // namespace ntprof
