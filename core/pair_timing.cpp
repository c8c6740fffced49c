#include "pair_timing.h"

#include <algorithm>

#include "ntprof_record.h"

namespace ntprof {
namespace {

uint64_t StampOf(const v1::Record& r, int index) {
  return index < r.stamps_size() ? r.stamps(index) : 0;
}

// Stamps of two machines: their difference is the clocks' offset plus a duration. Unsigned
// arithmetic wraps, and the cast gives the signed difference.
int64_t Minus(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

int64_t DriftOver(uint64_t a_ns, uint64_t b_ns) {
  const uint64_t elapsed = a_ns > b_ns ? a_ns - b_ns : b_ns - a_ns;
  return static_cast<int64_t>(elapsed / (1'000'000 / kClockDriftPpm));
}

}  // namespace

std::optional<OffsetBounds> OffsetBoundsOf(const v1::Record& host, const v1::Record& target) {
  const uint64_t h2 = StampOf(host, NTPROF_H2_CAPSULE_SENT);
  const uint64_t h3 = StampOf(host, NTPROF_H3_REPLY_RECEIVED);
  const uint64_t t0 = StampOf(target, NTPROF_T0_CAPSULE_RECEIVED);
  uint64_t reply = StampOf(target, NTPROF_T5_REPLY_SENT);
  if (h2 == 0 || h3 == 0 || t0 == 0 || reply == 0) return std::nullopt;
  // An NVMe/RDMA read's T5 is its SEND completion (the host's ACK); the reply left at the post
  // (the stage model takes the same span out of the target: stage_model.cpp).
  const uint64_t posted = StampOf(target, NTPROF_T_XFER_POSTED);
  const uint64_t done = StampOf(target, NTPROF_T_XFER_DONE);
  if (posted != 0 && done != 0 && posted >= StampOf(target, NTPROF_T3_BACKEND_DONE)) {
    reply -= done - posted;
  }
  return OffsetBounds{.lo = Minus(reply, h3),
                      .hi = Minus(t0, h2),
                      .host_ns = h2,
                      .exact = host.stack() == v1::STACK_KERNEL && target.stack() == v1::STACK_KERNEL};
}

bool SpanFits(const OffsetBounds& pair) { return pair.lo <= pair.hi; }

Placement Place(const OffsetBounds& earlier, const OffsetBounds& pair) {
  const int64_t drift = DriftOver(earlier.host_ns, pair.host_ns);
  if (pair.lo > earlier.hi + drift) return Placement::kTargetLater;
  if (pair.hi < earlier.lo - drift) return Placement::kTargetEarlier;
  return Placement::kAgrees;
}

OffsetBounds Intersection(const OffsetBounds& a, const OffsetBounds& b) {
  const int64_t drift = DriftOver(a.host_ns, b.host_ns);
  return OffsetBounds{.lo = std::max(a.lo - drift, b.lo),
                      .hi = std::min(a.hi + drift, b.hi),
                      .host_ns = std::max(a.host_ns, b.host_ns)};
}

}  // namespace ntprof
