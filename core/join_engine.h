// Joins the host half and the target half of each sampled command (docs/design.md, "Join"),
// streaming.
//
// Key: (subsystem NQN, cntlid, qid, cid). CIDs are reused, but within one queue both sides see a
// key's commands in the same order, so the k-th pending host record of a key pairs with the k-th
// pending target record; (opcode, nsid, slba, nlb) must agree as a check. A record that waited
// longer than the window for its other half leaves as host-only / target-only, counted.
//
// Arrival times are the caller's clock (wall clock live; the recording's approximate wall time
// offline) and are used for the window only, never for a duration.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof {

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
  uint64_t evicted_for_memory = 0;

  double matched_percent() const { return host == 0 ? 0.0 : 100.0 * matched / host; }
  JoinStats& operator+=(const JoinStats& o) {
    host += o.host;
    target += o.target;
    matched += o.matched;
    host_only += o.host_only;
    target_only += o.target_only;
    identity_mismatch += o.identity_mismatch;
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
  struct Key {
    uint32_t nqn_id;
    uint32_t cntlid;
    uint32_t qid;
    uint32_t cid;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.nqn_id, k.cntlid, k.qid, k.cid);
    }
  };
  struct Pending {
    v1::Record record;
    int64_t arrival_ns;
    Key key;
    bool is_host;
  };
  using PendingList = std::list<Pending>;
  struct KeyQueues {
    std::deque<PendingList::iterator> host;
    std::deque<PendingList::iterator> target;
  };

  Key KeyOf(const v1::Record& r);
  void Match(Key key, KeyQueues* queues);
  void Leave(PendingList::iterator it);  // emits a leftover and forgets it

  JoinOptions options_;
  Sink sink_;
  JoinStats stats_;
  absl::flat_hash_map<std::string, uint32_t> nqn_ids_;
  absl::flat_hash_map<Key, KeyQueues> queues_;
  PendingList pending_;  // in arrival order: the front is the oldest
};

// The identity check of a pair: same command on both sides.
bool SameCommand(const v1::Record& host, const v1::Record& target);

}  // namespace ntprof
