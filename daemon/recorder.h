// Recorder: one recording from start to a finalized sink. It keeps the engine's tables in step with
// the machine (the devices and ports its transport's row watches, re-read when the kernel reports
// a device event),
// converts records, and adds the device counters and cumulative losses to each interval's batch:
// the kernel's record source of the recording loop (recording_loop.h).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_engine.h"
#include "batch_sink.h"
#include "device_counters.h"
#include "device_events.h"
#include "interval_batch.h"
#include "record_converter.h"
#include "recording_loop.h"

namespace ntprof::agent {

struct RecordingOptions {
  SessionOptions session;
  double duration_s = 0;  // 0: until stopped
  double interval_s = 1;
  std::string session_name;
  // What the recording changes on its own while it runs (a hook attached or detached on demand),
  // one line each, for the operator's log; may be empty.
  std::function<void(const std::string&)> on_note;
};

// How long a sampled command may stay in flight before it is counted as never completed.
inline constexpr uint64_t kEvictAfterNs = 30ull * 1000 * 1000 * 1000;
// How often the in-flight tables are swept for such commands. A sweep reads every slot's key
// (16,384 slots, 3 MiB of table): once a second it was a third of an idle agent's CPU.
inline constexpr uint64_t kSweepEveryNs = 10ull * 1000 * 1000 * 1000;
// How often the programs' nested-call misses (nested_probe_miss) are re-read between intervals: a
// system call per program (a dozen) every interval was most of an idle agent's system calls. The
// end of a recording reads them exactly.
inline constexpr uint64_t kNestedMissEveryNs = 10ull * 1000 * 1000 * 1000;
// Devices are re-read on a kernel device event, and at least this often in case an
// event was missed (every interval when the events cannot be listened to).
inline constexpr uint64_t kRescanEveryNs = 30ull * 1000 * 1000 * 1000;

class Recorder : private RecordSource {
 public:
  using IntervalCallback = agent::IntervalCallback;

  static absl::StatusOr<std::unique_ptr<Recorder>> Start(const RecordingOptions& options,
                                                         const KernelFacts& facts,
                                                         LogCallback log = nullptr);

  const HookPlan& plan() const { return engine_->plan(); }
  // The .ntp header of this recording (start time, N, salt, missing optional hooks ...).
  const v1::FileHeader& header() const { return header_; }

  // Records (RunRecording) until stop is set, the duration elapses or the recorded device
  // disappears; then finalizes the sink. on_interval sees each batch as it is written.
  absl::Status Run(BatchSink& sink, const std::atomic<bool>& stop,
                   const IntervalCallback& on_interval = nullptr);
  const std::string& stop_reason() const { return stop_reason_; }
  // Samples at one in `rate` from now on (the finest rate of the sessions it records for); safe
  // from another thread while Run runs (one map update).
  absl::Status SetSampleRate(uint32_t rate) { return engine_->SetSampleRate(rate); }

 private:
  Recorder(RecordingOptions options, std::unique_ptr<AgentEngine> engine);
  // Re-reads which devices to watch. Returns false when the requested device is gone.
  absl::StatusOr<bool> UpdateWatchedDevices();
  // Target: attaches block_bio_queue while an enabled namespace's disk gives T2 no other way, and
  // detaches it when none does (nvmet_backends.h). Says so (on_note) when it changes or fails; a
  // failure does not end the recording.
  void UpdateBackendHooks();

  // RecordSource
  absl::StatusOr<int> Poll(int max_wait_ms, WireBatch& batch) override;
  absl::StatusOr<std::optional<std::string>> EndInterval(uint64_t now_ns) override;
  void AddIntervalCounters(v1::RecordBatch& batch, uint64_t start_ns, uint64_t now_ns) override;
  void FillLosses(v1::LossCounters* losses) const override;
  void Stop(bool drain, WireBatch& batch) override;
  RecordCallback AddTo(WireBatch& batch);

  RecordingOptions options_;
  std::unique_ptr<AgentEngine> engine_;
  std::string agent_;  // before identity_, which is built with it
  IdentityResolver identity_;
  v1::FileHeader header_;
  std::string stop_reason_;

  DeviceCounters counters_;
  uint64_t evicted_ = 0;
  uint64_t next_sweep_ns_ = 0;
  std::optional<DeviceEvents> device_events_;
  uint64_t next_rescan_ns_ = 0;
  uint64_t unfinished_at_stop_ = 0;
  uint64_t nested_probe_miss_ = 0;  // as last read
  uint64_t next_nested_read_ns_ = 0;
  uint64_t missing_stamp_ = 0;
  uint64_t records_ = 0;
  // A target record came without T2 while block_bio_queue was detached: a namespace may have been
  // enabled on a disk that needs it (configfs sends no device event), so look again now.
  bool backends_stale_ = false;
  std::string last_backend_note_;
};

}  // namespace ntprof::agent
