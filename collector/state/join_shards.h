// The live joins of every session, partitioned by subsystem NQN over a fixed number of shards
// (ntprof-collector --join-threads). Both halves of a command carry its subsystem NQN, the first
// part of the join's key, so the halves of a command always meet in the same shard and no shard
// ever needs another's state. It is the same key the collectors' ring divides the fleet by.
//
// With one shard, a join runs on the thread that submits its records, as they arrive. With more,
// each shard has a thread of its own: Submit queues records and returns (it waits only while the
// shard is max_queued records behind), and the shard's thread runs the joins and their sinks, so
// sinks must be safe to call from several threads at once. Records are moved, never copied, out
// of the submitted batch into the joins: each shard moves only its own, so the shards share the
// batch without a lock. A shard's thread is woken once 1,024 records wait (or every 5 ms while
// fewer do), not at every batch: waking a thread per batch of an agent cost more than the join. Whatever reads or changes a shard's
// joins (Expire, Flush, stats) goes through WithShard, which first runs what the shard still has
// queued: no caller ever sees a join that is behind records it already submitted.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "live_join.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::collector {

class JoinShards {
 public:
  using Records = google::protobuf::RepeatedPtrField<v1::Record>;
  // Some records of a batch, for one shard.
  struct Work {
    LiveJoin* join;  // the session's join of this shard
    std::shared_ptr<Records> records;
    std::vector<int> indices;  // of this shard's records in *records
    int64_t arrival_ns;
  };

  explicit JoinShards(size_t shards, size_t max_queued = 65'536);
  ~JoinShards();  // runs what is still queued, then stops the threads

  size_t size() const { return shards_.size(); }
  // The shard of a record: a stable hash of its subsystem NQN.
  size_t ShardOf(const v1::Record& record) const;

  // Joins records into joins[shard of each record] (one LiveJoin per shard).
  void Submit(const std::vector<LiveJoin*>& joins, std::shared_ptr<Records> records,
              int64_t arrival_ns);
  // Runs fn on the caller's thread while it alone holds the shard, after the shard's queue ran.
  void WithShard(size_t shard, const std::function<void()>& fn);

 private:
  struct Shard {
    std::mutex join_mu;   // held while the shard's joins run (taken before queue_mu)
    std::mutex queue_mu;  // guards queued and stopping
    std::condition_variable has_work;
    std::condition_variable has_room;
    std::vector<Work> queued;
    size_t queued_records = 0;
    bool stopping = false;
    std::thread thread;
  };

  static void Run(Work& work);
  static void RunQueued(Shard& shard);  // join_mu held
  void Queue(Shard& shard, Work work);
  size_t WakeAt() const { return std::min(kWakeAt, max_queued_); }
  void Serve(Shard& shard);

  static constexpr size_t kWakeAt = 1024;
  static constexpr std::chrono::milliseconds kLongestWait{5};

  const size_t max_queued_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace ntprof::collector
