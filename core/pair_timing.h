// What the stamps of a joined pair allow without a shared clock (docs/design.md, "Join").
//
// Nothing of a command happens at the target before the host sent its capsule (H2) or after the
// host received the reply (H3): in true time H2 <= T0 and T_reply <= H3, where T_reply is the
// target's hand-over of the reply (T5; for an NVMe/RDMA read, the post of its data and response,
// since its T5 is a send completion that can come after the host's H3). Writing the target's clock
// as the host's clock plus an offset, one pair bounds that offset:
//     T_reply - H3  <=  offset  <=  T0 - H2.
// The bounds are empty when the target's span does not fit inside the host's H2..H3: the halves
// are of two commands. Two pairs of one queue must allow a common offset: the two clocks tick at
// nearly the same rate, so their offset moves by at most kClockDriftPpm of the time between them.
#pragma once

#include <cstdint>
#include <optional>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

// Two clocks disciplined by NTP differ in rate by at most 500 ppm each (the kernel's limit).
inline constexpr int64_t kClockDriftPpm = 1000;

struct OffsetBounds {
  int64_t lo = 0;        // target clock - host clock, at least
  int64_t hi = 0;        // and at most
  uint64_t host_ns = 0;  // H2: where on the host's clock the pair lies (for the drift)
  // Both halves stamped by BPF programs on CLOCK_MONOTONIC. A half recorded in user space (SPDK,
  // libntprof_probe.so) is placed on CLOCK_MONOTONIC at its done probe: the application reads its
  // clock, then the BPF program reads CLOCK_MONOTONIC, and a thread preempted in between shifts
  // every stamp of that command by the gap (measured: 10 us to 4 ms on a loaded 2-core machine).
  // Its durations stay exact, so such a pair is judged by SpanFits alone, never against the
  // queue's other pairs.
  bool exact = true;
};

// nullopt when a stamp the bounds need was not recorded (H2, H3, T0, T5): nothing to judge.
std::optional<OffsetBounds> OffsetBoundsOf(const v1::Record& host, const v1::Record& target);

// Whether the target's span fits inside the host's capsule-sent to reply-received span: a
// comparison of two durations, each on one clock, so exact for every stack.
bool SpanFits(const OffsetBounds& pair);

// Where a pair lies against an earlier pair of the same queue.
enum class Placement {
  kAgrees,        // a common offset exists: the halves can be one command
  kTargetLater,   // the target half is later than its host half: that host half is older
  kTargetEarlier, // the target half is earlier than its host half: that target half is older
};
Placement Place(const OffsetBounds& earlier, const OffsetBounds& pair);

// The offsets two agreeing pairs both allow (each widened by the drift between them), placed at
// the later pair.
OffsetBounds Intersection(const OffsetBounds& a, const OffsetBounds& b);

}  // namespace ntprof
