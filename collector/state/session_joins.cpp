#include "session_joins.h"

namespace ntprof::collector {

SessionJoins::SessionJoins(JoinShards* shards, bool join_sides, const JoinOptions& options,
                           const JoinEngine::Sink& sink)
    : shards_(shards) {
  for (size_t i = 0; i < shards_->size(); ++i) {
    joins_.push_back(std::make_unique<LiveJoin>(join_sides, options, sink));
  }
}

void SessionJoins::Submit(JoinShards::Records* records, int64_t now) {
  std::vector<LiveJoin*> joins;
  for (const auto& join : joins_) joins.push_back(join.get());
  shards_->Submit(joins, std::make_shared<JoinShards::Records>(std::move(*records)), now);
}

void SessionJoins::AddNow(v1::Record record, int64_t now) {
  const size_t shard = shards_->ShardOf(record);
  shards_->WithShard(shard, [&] { joins_[shard]->Add(std::move(record), now); });
}

void SessionJoins::ForEach(const std::function<void(LiveJoin&)>& fn) const {
  for (size_t shard = 0; shard < shards_->size(); ++shard) {
    shards_->WithShard(shard, [&] { fn(*joins_[shard]); });
  }
}

JoinStats SessionJoins::Stats() const {
  JoinStats total;
  ForEach([&](LiveJoin& join) { total += join.stats(); });
  return total;
}

size_t SessionJoins::Expire(int64_t now) const {
  size_t pending = 0;
  ForEach([&](LiveJoin& join) {
    join.Expire(now);
    pending += join.pending();
  });
  return pending;
}

void SessionJoins::Flush() const {
  ForEach([](LiveJoin& join) { join.Flush(); });
}

void SessionJoins::SetJoinSides(bool join_sides) const {
  ForEach([join_sides](LiveJoin& join) { join.set_join_sides(join_sides); });
}

}  // namespace ntprof::collector
