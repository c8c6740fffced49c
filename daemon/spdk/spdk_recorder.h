// SpdkRecorder: one recording of SPDK targets or hosts (`ntprofd record --spdk-target|--spdk-host`)
// from start to a finalized sink:
//   find the processes (PID, or every process of a BINARY, also those that start later: /proc is
//   rescanned), attach to their `ntprof` USDT probes, write the sample rate and salt into each,
//   turn each probe firing into a record - and switch sampling off (rate 0) in every process when
//   the recording ends, whatever ends it. The SPDK record source of the recording loop
//   (recording_loop.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "batch_sink.h"
#include "interval_batch.h"
#include "recording_loop.h"
#include "ntprof/v1/record.pb.h"
#include "probe_control.h"
#include "spdk_process_finder.h"
#include "spdk_usdt_probes.h"

namespace ntprof::agent::spdk {

struct SpdkRecordingOptions {
  SpdkRole role = SpdkRole::kTarget;
  std::vector<std::string> targets;  // BINARY or PID, as given
  uint32_t sample_rate = 0;
  uint64_t salt = 0;
  double duration_s = 0;  // 0: until stopped
  double interval_s = 1;
  double rescan_s = 0.25;  // how often /proc is searched for new and exited processes
  v1::Transport transport = v1::TRANSPORT_TCP;  // for the file header; records carry their own
  std::string session_name;
};

class SpdkRecorder : private RecordSource {
 public:
  using LogCallback = std::function<void(const std::string&)>;
  using IntervalCallback = agent::IntervalCallback;

  // Checks the arguments (clear errors for a binary without probes, a PID that is gone or not
  // built with the contract), loads the BPF program and attaches to the processes running now.
  static absl::StatusOr<std::unique_ptr<SpdkRecorder>> Start(const SpdkRecordingOptions& options,
                                                             LogCallback log = nullptr);
  // Switches sampling off in every process still attached.
  ~SpdkRecorder();

  const v1::FileHeader& header() const { return header_; }
  // Records until stop is set, the duration elapses, or every process named by PID has exited
  // (with no BINARY to wait for); then switches sampling off and finalizes the sink.
  absl::Status Run(BatchSink& sink, const std::atomic<bool>& stop,
                   const IntervalCallback& on_interval = nullptr);
  const std::string& stop_reason() const { return stop_reason_; }
  size_t attached_processes() const { return processes_.size(); }

 private:
  struct Tracked {
    uint64_t start_time = 0;
    std::string comm;
    std::vector<ControlBlock> controls;
  };

  SpdkRecorder(SpdkRecordingOptions options, LogCallback log);
  // Finds new processes and forgets exited ones.
  void Rescan();
  absl::Status Track(pid_t pid);
  void StopSampling(pid_t pid, Tracked& t);
  void OnEvent(const ntprof_spdk_event& e, WireBatch& batch);

  // RecordSource
  // The USDT programs wake the agent at every event; the short poll keeps AfterPoll's process
  // rescans on time.
  absl::StatusOr<int> Poll(int max_wait_ms, WireBatch& batch) override {
    return PollProbes(std::min(kPollMs, max_wait_ms), batch);
  }
  std::optional<std::string> AfterPoll(uint64_t now_ns) override;
  void FillLosses(v1::LossCounters* losses) const override;
  void Stop(bool drain, WireBatch& batch) override;
  absl::StatusOr<int> PollProbes(int timeout_ms, WireBatch& batch);

  static constexpr int kPollMs = 50;
  void Log(const std::string& line) const {
    if (log_) log_(line);
  }

  SpdkRecordingOptions options_;
  LogCallback log_;
  std::unique_ptr<SpdkProcessFinder> finder_;
  std::unique_ptr<SpdkUsdtProbes> probes_;
  std::map<pid_t, Tracked> processes_;
  std::map<pid_t, uint64_t> rejected_;  // pid -> start time: not ours
  std::map<pid_t, uint64_t> exited_;    // pid -> start time: recorded, then exited
  std::map<pid_t, uint64_t> first_seen_ns_;  // matching processes not attachable yet
  v1::FileHeader header_;
  std::string agent_;
  std::shared_ptr<const EncodedIdentity> last_identity_;  // of the latest event
  std::string stop_reason_;

  bool only_pids_ = false;  // every process was given by PID: the recording ends when they exit
  uint64_t next_rescan_ns_ = 0;
  uint64_t missing_stamp_ = 0;
  uint64_t unusable_ = 0;
};

}  // namespace ntprof::agent::spdk
