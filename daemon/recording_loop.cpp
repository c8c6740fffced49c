#include "recording_loop.h"

#include <algorithm>

#include "monotonic_clock.h"

namespace ntprof::agent {

int PollWaitMs(uint64_t now_ns, uint64_t next_interval_ns, uint64_t end_ns) {
  const uint64_t due = std::min(next_interval_ns, end_ns);
  if (due <= now_ns) return 0;
  // rounded up, so the poll does not return just before the deadline and spin once more
  const uint64_t wait_ms = (due - now_ns + 999'999) / 1'000'000;
  return static_cast<int>(std::min<uint64_t>(wait_ms, kMaxPollWaitMs));
}

absl::Status RunRecording(RecordSource& source, const RecordingLoopOptions& options,
                          BatchSink& sink, const std::atomic<bool>& stop,
                          const IntervalCallback& on_interval, std::string* stop_reason) {
  const uint64_t start = ClockNs(CLOCK_MONOTONIC);
  const uint64_t interval_ns = static_cast<uint64_t>(options.interval_s * 1e9);
  const uint64_t end = options.duration_s > 0
                           ? start + static_cast<uint64_t>(options.duration_s * 1e9)
                           : UINT64_MAX;
  IntervalBatch batch;
  batch.Begin(start);
  uint64_t next_interval = start + interval_ns;
  absl::Status failure;

  auto flush = [&](bool interval_end) {
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (interval_end) source.AddIntervalCounters(batch.batch().extras(), batch.interval_start_ns(), now);
    source.FillLosses(batch.batch().extras().mutable_losses());
    return batch.Flush(sink, on_interval, interval_end, now);
  };

  *stop_reason = "stopped by signal";
  while (!stop.load()) {
    const int wait_ms = PollWaitMs(ClockNs(CLOCK_MONOTONIC), next_interval, end);
    auto polled = source.Poll(wait_ms, batch.batch());
    if (!polled.ok()) {
      failure = polled.status();
      break;
    }
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (std::optional<std::string> reason = source.AfterPoll(now)) {
      *stop_reason = *reason;
      break;
    }
    if (now >= next_interval) {
      next_interval += interval_ns * ((now - next_interval) / interval_ns + 1);
      auto verdict = source.EndInterval(now);
      if (absl::Status st = flush(true); !st.ok()) {
        failure = st;
        break;
      }
      if (!verdict.ok()) {
        failure = verdict.status();
        break;
      }
      if (*verdict) {
        *stop_reason = **verdict;
        break;
      }
    } else if (batch.batch().size() >= kMaxBatchRecords) {
      if (absl::Status st = flush(false); !st.ok()) {
        failure = st;
        break;
      }
    }
    if (now >= end) {
      *stop_reason = "duration elapsed";
      break;
    }
  }
  // Stop the source and, unless it failed, collect what it still produced and write the last
  // (partial) interval; then the trailer, with the losses as they stand.
  source.Stop(failure.ok(), batch.batch());
  if (failure.ok()) failure = flush(true);
  v1::FileTrailer trailer;
  trailer.set_end_wall_ns(ClockNs(CLOCK_REALTIME));
  trailer.set_end_mono_ns(ClockNs(CLOCK_MONOTONIC));
  source.FillLosses(trailer.mutable_losses());
  absl::Status fin = sink.Finalize(trailer);
  if (!failure.ok()) return failure;
  return fin;
}

}  // namespace ntprof::agent
