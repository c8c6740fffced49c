// Per-agent sequence numbers (collector.proto, "Agent stream contract"): which messages of one
// (hostname, stream_epoch) the collector already holds, so a replay after a reconnect is counted
// once, and which numbers are missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>

namespace ntprof::collector {

class SequenceTracker {
 public:
  enum class Verdict { kNew, kDuplicate };

  // Out-of-order numbers held above the contiguous prefix are bounded: beyond this many, the
  // oldest hole is declared lost (an agent that skips numbers cannot grow our memory).
  static constexpr size_t kMaxHeldAbove = 100'000;

  Verdict Accept(uint64_t seq);
  // True when seq is already held (or declared lost): a replay to discard.
  bool Holds(uint64_t seq) const { return seq <= contiguous_ || above_.count(seq) != 0; }
  // The agent will never send [first, last] (its spool overflowed).
  void DeclareLost(uint64_t first, uint64_t last);

  // Every number up to this one is held or declared lost: what Ack carries.
  uint64_t acked() const { return contiguous_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t lost() const { return lost_; }
  // Numbers not yet seen below the highest one seen: replay may still fill them.
  uint64_t holes() const;

 private:
  void Advance();

  uint64_t contiguous_ = 0;
  std::set<uint64_t> above_;  // held numbers > contiguous_ + 1
  uint64_t duplicates_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace ntprof::collector
