#include "join_shards.h"

#include "hash_ring.h"

namespace ntprof::collector {

JoinShards::JoinShards(size_t shards, size_t max_queued)
    : max_queued_(max_queued == 0 ? 1 : max_queued) {
  const size_t count = shards == 0 ? 1 : shards;
  for (size_t i = 0; i < count; ++i) shards_.push_back(std::make_unique<Shard>());
  if (count == 1) return;  // the submitting thread joins
  for (auto& shard : shards_) {
    shard->thread = std::thread([this, s = shard.get()] { Serve(*s); });
  }
}

JoinShards::~JoinShards() {
  for (auto& shard : shards_) {
    {
      std::lock_guard lock(shard->queue_mu);
      shard->stopping = true;
    }
    shard->has_work.notify_all();
    shard->has_room.notify_all();
  }
  for (auto& shard : shards_) {
    if (shard->thread.joinable()) shard->thread.join();
  }
}

size_t JoinShards::ShardOf(const v1::Record& record) const {
  if (shards_.size() == 1) return 0;
  return common::StableHash64(record.subsys_nqn()) % shards_.size();
}

void JoinShards::Run(Work& work) {
  for (int i : work.indices) work.join->Add(std::move(*work.records->Mutable(i)), work.arrival_ns);
}

void JoinShards::RunQueued(Shard& shard) {
  std::vector<Work> queued;
  {
    std::lock_guard lock(shard.queue_mu);
    queued.swap(shard.queued);
    shard.queued_records = 0;
  }
  shard.has_room.notify_all();
  for (Work& work : queued) Run(work);
}

void JoinShards::Serve(Shard& shard) {
  for (;;) {
    {
      std::unique_lock lock(shard.queue_mu);
      shard.has_work.wait_for(lock, kLongestWait,
                              [&] { return shard.queued_records >= WakeAt() || shard.stopping; });
      if (shard.queued.empty()) {
        if (shard.stopping) return;
        continue;
      }
    }
    // join_mu before taking the queue: WithShard, holding join_mu, then sees every record either
    // still queued or already joined, never in between.
    std::lock_guard join_lock(shard.join_mu);
    RunQueued(shard);
  }
}

void JoinShards::Submit(const std::vector<LiveJoin*>& joins,
                        std::shared_ptr<Records> records, int64_t arrival_ns) {
  std::vector<Work> work(shards_.size());
  for (size_t s = 0; s < work.size(); ++s) work[s] = Work{joins[s], records, {}, arrival_ns};
  for (int i = 0; i < records->size(); ++i) work[ShardOf((*records)[i])].indices.push_back(i);
  for (size_t s = 0; s < work.size(); ++s) {
    if (!work[s].indices.empty()) Queue(*shards_[s], std::move(work[s]));
  }
}

void JoinShards::Queue(Shard& shard, Work work) {
  if (!shard.thread.joinable()) {
    std::lock_guard join_lock(shard.join_mu);
    Run(work);
    return;
  }
  bool wake = false;
  {
    std::unique_lock lock(shard.queue_mu);
    shard.has_room.wait(lock,
                        [&] { return shard.queued_records < max_queued_ || shard.stopping; });
    const size_t before = shard.queued_records;
    shard.queued_records += work.indices.size();
    shard.queued.push_back(std::move(work));
    wake = before < WakeAt() && shard.queued_records >= WakeAt();
  }
  if (wake) shard.has_work.notify_one();
}

void JoinShards::WithShard(size_t index, const std::function<void()>& fn) {
  Shard& shard = *shards_[index];
  std::lock_guard join_lock(shard.join_mu);
  RunQueued(shard);
  fn();
}

}  // namespace ntprof::collector
