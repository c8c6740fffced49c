// The live join of one session, one LiveJoin per shard of JoinShards: records go to their
// subsystem's shard and are joined on that shard's thread.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "join_shards.h"
#include "live_join.h"

namespace ntprof::collector {

class SessionJoins {
 public:
  SessionJoins(JoinShards* shards, bool join_sides, const JoinOptions& options,
               const JoinEngine::Sink& sink);

  // The batch's records, queued to their shards.
  void Submit(JoinShards::Records* records, int64_t now);
  // One record joined on the caller's thread (a reload from the stored files).
  void AddNow(v1::Record record, int64_t now);
  // fn runs on every shard's join once that shard ran what was queued for it.
  void ForEach(const std::function<void(LiveJoin&)>& fn) const;
  JoinStats Stats() const;
  // Halves older than the window leave as leftovers; returns what still waits.
  size_t Expire(int64_t now) const;
  void Flush() const;
  void SetJoinSides(bool join_sides) const;

 private:
  JoinShards* shards_;
  std::vector<std::unique_ptr<LiveJoin>> joins_;  // one per shard, run only by JoinShards
};

}  // namespace ntprof::collector
