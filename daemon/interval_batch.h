// The batch a recording fills between flushes: numbered per agent, tied to the interval it belongs
// to, written to a sink and shown to the interval callback. Shared by the kernel and SPDK recorders.
// The batch is in wire form (wire_batch.h) and its buffers are reused from one flush to the next,
// so a steady recording allocates nothing per record.
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "batch_sink.h"
#include "wire_batch.h"

namespace ntprof::agent {

// interval_end: the batch closes an interval (it carries the device counters); false for a batch
// cut early because the interval had many records.
using IntervalCallback =
    std::function<void(const BatchShare& batch, uint64_t interval_ns, bool interval_end)>;

// A busy interval is cut into batches of about this many records.
inline constexpr size_t kMaxBatchRecords = 8192;

class IntervalBatch {
 public:
  // Room for a second's records at 1 in 100 of 100,000 IOPS from the start: a batch that grew as
  // records came copied every record it held at each doubling, which counted in the agent's cost
  // per sampled command (docs/overhead.md, "The sixth cut"). A busier recording grows it once,
  // early, and keeps the capacity (Clear); kMaxBatchRecords' 1.4 MB is not taken for every one.
  static constexpr size_t kReservedRecords = 1024;
  IntervalBatch() { batch_.Reserve(kReservedRecords); }

  void Begin(uint64_t start_ns) { interval_start_ns_ = start_ns; }

  // Valid until the next Flush.
  WireBatch& batch() { return batch_; }
  uint64_t interval_start_ns() const { return interval_start_ns_; }

  // Numbers the batch, writes it, shows it to on_interval, and starts the next one (a new
  // interval too when interval_end).
  absl::Status Flush(BatchSink& sink, const IntervalCallback& on_interval, bool interval_end,
                     uint64_t now_ns);

 private:
  WireBatch batch_;
  uint64_t seq_ = 0;
  uint64_t interval_start_ns_ = 0;
};

}  // namespace ntprof::agent
