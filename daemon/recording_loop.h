// The one recording loop: poll a record source, cut a batch at every interval (and early when an
// interval has many records), stop on request, after the duration or when the source says so,
// then drain the source and finalize the sink. The kernel's BPF programs (Recorder) and SPDK's
// USDT probes (spdk/SpdkRecorder) are its two sources; `ntprofd record` and `ntprofd serve` both
// record through it.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "batch_sink.h"
#include "interval_batch.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::agent {

// Where a recording's records come from. A reason (std::optional<std::string>) ends the recording
// with that reason; none goes on.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Waits up to max_wait_ms (less if the source polls on a shorter period of its own) for records
  // and adds them to `batch`.
  virtual absl::StatusOr<int> Poll(int max_wait_ms, WireBatch& batch) = 0;
  // After every poll: work on the source's own period (SPDK looks for new and exited processes).
  virtual std::optional<std::string> AfterPoll(uint64_t /*now_ns*/) { return std::nullopt; }
  // An interval ends, before its batch is cut: keep up with the machine (devices, identities,
  // commands that never completed). An error fails the recording and a reason ends it, both once
  // the interval's batch is written.
  virtual absl::StatusOr<std::optional<std::string>> EndInterval(uint64_t /*now_ns*/) {
    return std::nullopt;
  }
  // What the source counts per interval (device counters), into the extras of the batch that
  // closes [start_ns, now_ns).
  virtual void AddIntervalCounters(v1::RecordBatch& /*extras*/, uint64_t /*start_ns*/,
                                   uint64_t /*now_ns*/) {}
  // The losses so far (cumulative): in every batch and the trailer.
  virtual void FillLosses(v1::LossCounters* losses) const = 0;
  // The recording ends: stop producing records. `drain` (it did not fail): add what is still on
  // its way to `batch`, the last one.
  virtual void Stop(bool drain, WireBatch& batch) = 0;
};

struct RecordingLoopOptions {
  double interval_s = 1;
  double duration_s = 0;  // 0: until stopped
};

// The longest the loop waits in one poll: how late it may notice `stop` set by another thread (a
// signal interrupts the wait at once). Otherwise it sleeps until the interval ends: the BPF side
// wakes it early every NTPROF_RING_WAKEUP_RECORDS records. A fixed 100 ms poll
// woke an idle agent 10 times a second, which under emulation cost 1 % of a guest's CPU per I/O
// (docs/lab/overhead-log.md, sixth pass).
inline constexpr int kMaxPollWaitMs = 1000;

// How long the poll at now_ns may wait: until the earlier of the next interval and the end, at
// most kMaxPollWaitMs, at least 0.
int PollWaitMs(uint64_t now_ns, uint64_t next_interval_ns, uint64_t end_ns);

// Records from `source` into `sink` until `stop` is set, the duration elapses or the source ends
// the recording; always finalizes the sink. on_interval sees each batch as it is written;
// stop_reason says why it ended.
absl::Status RunRecording(RecordSource& source, const RecordingLoopOptions& options,
                          BatchSink& sink, const std::atomic<bool>& stop,
                          const IntervalCallback& on_interval, std::string* stop_reason);

}  // namespace ntprof::agent
