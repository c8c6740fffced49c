// Joins the host half and the target half of each sampled command (docs/design.md, "Join"),
// streaming.
//
// Key: (subsystem NQN, cntlid, qid, cid). CIDs are reused, but within one queue both sides see a
// key's commands in the same order, so the k-th pending host record of a key pairs with the k-th
// pending target record; (opcode, nsid, slba, nlb) must agree as a check. A record that waited
// longer than the window for its other half leaves as host-only / target-only, counted.
//
// The identity check cannot tell two commands of the same LBA apart (a QD1 queue of SPDK reuses
// one cid for every command), so a half left over at a recording's edge would pair with the other
// side's first command of that LBA. The stamps refuse such pairs (pair_timing.h): the target's
// span must fit inside the host's H2..H3, and all pairs of a queue must allow one offset between
// the two clocks. One pair that agrees with another can be chance (two commands of similar
// latency), so a queue's first pairs wait until kConfirmingPairs of them agree (or the window or
// the input ends: then those that agree with the latest go, the rest are refused). After that
// each pair is placed against the queue's last one, and of a pair that disagrees the older half
// leaves; kConfirmingPairs refused pairs that agree with each other replace the reference (the
// clocks' relation changed, or the reference was wrong).
//
// Arrival times are the caller's clock (wall clock live; the recording's approximate wall time
// offline) and are used for the window only, never for a duration.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ntprof/v1/record.pb.h"
#include "pair_timing.h"

namespace ntprof {

// How many pairs of a queue must agree on the clocks' offset before they are trusted.
inline constexpr size_t kConfirmingPairs = 3;
// How many of a queue's first pairs wait for agreement at most: beyond, the oldest is refused.
inline constexpr size_t kMaxHeldPairs = 8;

struct JoinOptions {
  int64_t window_ns = 10'000'000'000;   // how long a half waits for the other
  size_t max_pending = 4'000'000;       // memory bound: beyond it the oldest waiting half leaves
};

struct JoinStats {
  uint64_t host = 0;
  uint64_t target = 0;
  uint64_t matched = 0;
  uint64_t host_only = 0;      // left unmatched (window, end of input or memory bound)
  uint64_t target_only = 0;
  uint64_t identity_mismatch = 0;  // same key, different (opcode, slba, nlb): a half was lost
  uint64_t refused = 0;  // same key and identity, but their times cannot be one command
  uint64_t evicted_for_memory = 0;

  double matched_percent() const { return host == 0 ? 0.0 : 100.0 * matched / host; }
  JoinStats& operator+=(const JoinStats& o) {
    host += o.host;
    target += o.target;
    matched += o.matched;
    host_only += o.host_only;
    target_only += o.target_only;
    identity_mismatch += o.identity_mismatch;
    refused += o.refused;
    evicted_for_memory += o.evicted_for_memory;
    return *this;
  }
};

class JoinEngine {
 public:
  // Called for every outcome: both set (joined), or one of them null (a leftover).
  using Sink = std::function<void(const v1::Record* host, const v1::Record* target)>;

  JoinEngine(JoinOptions options, Sink sink);

  void Add(v1::Record record, int64_t arrival_ns);
  // Emits as leftovers the halves that arrived before now_ns - window.
  void Expire(int64_t now_ns);
  // End of input: everything still waiting leaves as a leftover.
  void Flush();

  const JoinStats& stats() const { return stats_; }
  size_t pending() const { return pending_.size(); }

 private:
  struct QueueKey {
    uint32_t nqn_id;
    uint32_t cntlid;
    uint32_t qid;
    bool operator==(const QueueKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const QueueKey& k) {
      return H::combine(std::move(h), k.nqn_id, k.cntlid, k.qid);
    }
  };
  struct Key {
    QueueKey queue;
    uint32_t cid;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.queue, k.cid);
    }
  };
  struct Pending {
    v1::Record record;
    int64_t arrival_ns;
    Key key;
    bool is_host;
    bool held = false;  // half of one of a queue's first pairs, waiting for agreement
  };
  using PendingList = std::list<Pending>;
  struct KeyQueues {
    std::deque<PendingList::iterator> host;
    std::deque<PendingList::iterator> target;
  };
  struct HeldPair {
    PendingList::iterator host;
    PendingList::iterator target;
    OffsetBounds bounds;
  };
  // What a queue's pairs so far say about the two clocks.
  struct QueueClock {
    std::optional<OffsetBounds> last;   // the reference: the last pair emitted
    std::vector<OffsetBounds> refused;  // pairs refused against `last` since it was set
    std::vector<HeldPair> held;         // before any reference: the queue's first pairs
  };

  Key KeyOf(const v1::Record& r);
  void Match(Key key, KeyQueues* queues);
  // A pair of the same identity whose span fits: emitted, held or refused by its queue's clock.
  // Returns the half that must leave, or end() when the pair was taken.
  PendingList::iterator Judge(PendingList::iterator host, PendingList::iterator target,
                              const OffsetBounds& bounds, KeyQueues* queues);
  void Emit(PendingList::iterator host, PendingList::iterator target);
  void Hold(QueueClock* clock, PendingList::iterator host, PendingList::iterator target,
            const OffsetBounds& bounds, KeyQueues* queues);
  // The held pairs that agree with `with` go out joined and it becomes the reference; the others'
  // halves go out as leftovers.
  void Settle(QueueClock* clock, const OffsetBounds& with);
  QueueClock& ClockOf(const Key& key);
  // Of two halves that cannot pair, the one that lies earlier: it has no partner left.
  PendingList::iterator Older(PendingList::iterator host, PendingList::iterator target,
                              const std::optional<OffsetBounds>& bounds);
  void Leave(PendingList::iterator it);  // emits a leftover and forgets it
  void EmitLeftover(PendingList::iterator it);

  JoinOptions options_;
  Sink sink_;
  JoinStats stats_;
  absl::flat_hash_map<std::string, uint32_t> nqn_ids_;
  absl::flat_hash_map<Key, KeyQueues> queues_;
  absl::flat_hash_map<QueueKey, QueueClock> clocks_;
  PendingList pending_;  // in arrival order: the front is the oldest
};

// The identity check of a pair: same command on both sides.
bool SameCommand(const v1::Record& host, const v1::Record& target);

}  // namespace ntprof
