#include "sequence_tracker.h"

#include <algorithm>

namespace ntprof::collector {

SequenceTracker::Verdict SequenceTracker::Accept(uint64_t seq) {
  if (seq <= contiguous_ || above_.count(seq) != 0) {
    ++duplicates_;
    return Verdict::kDuplicate;
  }
  above_.insert(seq);
  Advance();
  if (above_.size() > kMaxHeldAbove) {
    // Give up on the oldest hole: count it lost and move the prefix past it.
    const uint64_t next_held = *above_.begin();
    lost_ += next_held - contiguous_ - 1;
    contiguous_ = next_held - 1;
    Advance();
  }
  return Verdict::kNew;
}

void SequenceTracker::DeclareLost(uint64_t first, uint64_t last) {
  if (last < first || last <= contiguous_) return;
  for (uint64_t s = std::max(first, contiguous_ + 1); s <= last; ++s) {
    if (above_.insert(s).second) ++lost_;
    if (above_.size() > kMaxHeldAbove) Advance();
  }
  Advance();
}

void SequenceTracker::Advance() {
  while (!above_.empty() && *above_.begin() == contiguous_ + 1) {
    ++contiguous_;
    above_.erase(above_.begin());
  }
}

uint64_t SequenceTracker::holes() const {
  if (above_.empty()) return 0;
  return *above_.rbegin() - contiguous_ - above_.size();
}

}  // namespace ntprof::collector
