#include "interval_batch.h"

namespace ntprof::agent {

absl::Status IntervalBatch::Flush(BatchSink& sink, const IntervalCallback& on_interval,
                                  bool interval_end, uint64_t now_ns) {
  batch_.extras().set_seq(++seq_);
  const BatchShare whole(batch_, batch_.extras());
  absl::Status st = sink.WriteBatch(whole);
  if (st.ok() && on_interval) on_interval(whole, now_ns - interval_start_ns_, interval_end);
  if (interval_end) interval_start_ns_ = now_ns;
  batch_.Clear();
  return st;
}

}  // namespace ntprof::agent
