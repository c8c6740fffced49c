// One bound of the regression gate (`--fail-if`), parsed from its text (docs/usage.md, "The
// regression gate"):
//
//   [GROUP:]SUBJECT.STATISTIC OP CHANGE       e.g.  storage.p99 > +10%    end-to-end.mean > +20us
//
//   GROUP      a prefix of a group's name ("read", "write 16KiB"); without it, every group
//   SUBJECT    a stage or component id (storage, network, end-to-end, drive, ...; - or _)
//   STATISTIC  mean, or pN: a percentile, 0 < N < 100 (p50, p90, p99, p99.9)
//   OP         > (crossed when it grew by more than CHANGE) or < (when it fell by more)
//   CHANGE     a signed number with % (relative to BASE) or a unit: ns, us, ms, s (absolute)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sample_statistic.h"
#include "stage_model.h"

namespace ntprof {

struct RegressionBound {
  std::string text;   // as given, for messages
  std::string group;  // a prefix of the group names it applies to; "" = all
  std::optional<Stage> stage;          // exactly one of stage and component
  std::optional<Component> component;
  Statistic statistic;
  bool above = true;      // '>': crossed when the change is above `limit`; '<': below
  bool relative = true;   // limit is a fraction of BASE (0.10 = 10 %); else nanoseconds
  double limit = 0;

  std::string_view SubjectId() const;
  // "+10%", "+20us": the limit as the grammar writes it.
  std::string LimitText() const;
};

absl::StatusOr<RegressionBound> ParseRegressionBound(absl::string_view text);

}  // namespace ntprof
