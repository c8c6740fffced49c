#include "interval_batch.h"

namespace ntprof::agent {

absl::Status IntervalBatch::Flush(BatchSink& sink, const IntervalCallback& on_interval,
                                  bool interval_end, uint64_t now_ns) {
  batch_->set_seq(++seq_);
  absl::Status st = sink.WriteBatch(*batch_);
  if (st.ok() && on_interval) on_interval(*batch_, now_ns - interval_start_ns_, interval_end);
  if (interval_end) interval_start_ns_ = now_ns;
  arena_.Reset();
  batch_ = google::protobuf::Arena::CreateMessage<v1::RecordBatch>(&arena_);
  return st;
}

}  // namespace ntprof::agent
