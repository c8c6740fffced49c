// The batch a recording fills between flushes: numbered per agent, tied to the interval it belongs
// to, written to a sink and shown to the interval callback. Shared by the kernel and SPDK recorders.
// The batch lives on a protobuf arena that is reset after each flush: thousands of records a
// batch cost a few large allocations instead of several small ones each (measured by
// tests/bench/agent_drain_bench). The arena's first block is the batch's own and survives the
// reset, so an interval of few records allocates nothing.
#pragma once

#include <google/protobuf/arena.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "batch_sink.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::agent {

// interval_end: the batch closes an interval (it carries the device counters); false for a batch
// cut early because the interval had many records.
using IntervalCallback =
    std::function<void(const v1::RecordBatch& batch, uint64_t interval_ns, bool interval_end)>;

class IntervalBatch {
 public:
  void Begin(uint64_t start_ns) { interval_start_ns_ = start_ns; }

  // Valid until the next Flush.
  v1::RecordBatch& batch() { return *batch_; }
  uint64_t interval_start_ns() const { return interval_start_ns_; }

  // Numbers the batch, writes it, shows it to on_interval, and starts the next one (a new
  // interval too when interval_end).
  absl::Status Flush(BatchSink& sink, const IntervalCallback& on_interval, bool interval_end,
                     uint64_t now_ns);

 private:
  static constexpr size_t kFirstBlockBytes = 64 * 1024;
  static google::protobuf::ArenaOptions FirstBlock(char* block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = kFirstBlockBytes;
    return options;
  }

  std::unique_ptr<char[]> first_block_ = std::make_unique<char[]>(kFirstBlockBytes);
  google::protobuf::Arena arena_{FirstBlock(first_block_.get())};
  v1::RecordBatch* batch_ = google::protobuf::Arena::CreateMessage<v1::RecordBatch>(&arena_);
  uint64_t seq_ = 0;
  uint64_t interval_start_ns_ = 0;
};

}  // namespace ntprof::agent
