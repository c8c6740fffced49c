// The regression gate's decision: for each bound (`--fail-if`) and each group both runs have, the
// change of the bounded statistic from BASE to NEW with its bootstrap interval, and whether the
// bound is crossed. Crossed means the whole interval lies beyond the limit: a change that sampling
// noise could explain does not fail a build.
#pragma once

#include <string>
#include <vector>

#include "bootstrap_interval.h"
#include "regression_bound.h"
#include "report.h"

namespace ntprof {

struct BoundCheck {
  enum class Verdict : uint8_t {
    kCrossed,    // the whole interval is beyond the limit
    kWithin,     // some of the interval is not
    kUndecided,  // nothing to decide on (`why` says what is missing)
  };
  RegressionBound bound;
  std::string group;  // the group's name ("read 4KiB nvme0n1"; "a vs b" when the runs differ)
  std::string label;  // the stage's or component's label
  Verdict verdict = Verdict::kUndecided;
  std::string why;
  ChangeInterval change;
  uint64_t base_n = 0, new_n = 0;        // commands the interval was computed from
  uint64_t base_seen = 0, new_seen = 0;  // commands the runs had (more when samples were capped)
};

struct GateResult {
  double confidence = 0.95;
  std::vector<BoundCheck> checks;  // by bound, then group
  // Bounds that no group could decide: no group of both runs has the stage, or too few commands.
  std::vector<std::string> undecided;

  bool crossed() const;
};

// The fewest commands a statistic is resampled from: percentile bootstraps say nothing useful
// with fewer than 10 commands beyond the percentile on either side.
uint64_t FewestCommandsFor(Statistic statistic);

// Reports built with ReportExtras::samples; comparison = Compare(base, next).
GateResult ApplyGate(const Report& base, const Report& next, const Comparison& comparison,
                     const std::vector<RegressionBound>& bounds, const BootstrapOptions& options);

}  // namespace ntprof
