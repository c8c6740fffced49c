#include "io_span.h"

#include <algorithm>

namespace ntprof {

void IoSpan::Add(const v1::Record& record) {
  Range& range = by_machine_[record.agent()];
  for (uint64_t stamp : record.stamps()) {
    if (stamp == 0) continue;  // not seen
    range.first = std::min(range.first, stamp);
    range.last = std::max(range.last, stamp);
  }
}

int64_t IoSpan::LongestNs() const {
  int64_t longest = 0;
  for (const auto& [machine, range] : by_machine_) {
    if (range.last > range.first) {
      longest = std::max(longest, static_cast<int64_t>(range.last - range.first));
    }
  }
  return longest;
}

}  // namespace ntprof
