// Several sessions recorded by one recorder (docs/control-plane.md, "Several sessions at once"):
// the recorder samples at the finest of their rates, with the fleet's salt they all share, and
// this sink splits each of its batches among them. A session gets the records its own rate and
// filters keep (SessionKeeps: the sets nest, so that is exactly what it would have recorded
// alone), the counters of its devices, and the losses since it joined; each session's own sink
// numbers and sends its share.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "batch_sink.h"
#include "ntprof/v1/agent.pb.h"

namespace ntprof::agent {

class SessionFanOut : public BatchSink {
 public:
  // How a session's share ended: its trailer (or the error that ended it) and why.
  using Finished = std::function<void(absl::StatusOr<v1::FileTrailer> trailer,
                                      const std::string& reason)>;

  // The session takes its share from the next batch on; it ends at end_mono_ns (0: when asked).
  // False once the last session left (the recorder is ending): a new one needs a new recorder.
  // opened runs once it is admitted, before any batch can reach its sink (SessionOpened first).
  // It keeps the commands that start from start_mono_ns on (0: every one the recorder sampled).
  bool Join(const v1::RecordingSettings& settings, BatchSink* sink, uint64_t start_mono_ns,
            uint64_t end_mono_ns, Finished finished, const std::function<void()>& opened);
  // The session ends with its share of the next batch: the commands that started before now. The
  // last one to leave ends the recording (stop() is set), so that its end drains the commands in
  // flight as a lone session's does.
  void Leave(const std::string& session);
  bool Has(const std::string& session) const;
  // The finest rate of the sessions (0 when none).
  uint32_t FinestRate() const;
  // Set while no session is in (before the first joins, and once the last left): the recorder
  // stops.
  const std::atomic<bool>& stop() const { return stop_; }

  absl::Status WriteBatch(const BatchShare& batch) override;
  // The recording ended: every session still in gets the trailer.
  absl::Status Finalize(const v1::FileTrailer& trailer) override;
  // The recording failed (or never started): every session still in ends with the error.
  void Fail(const absl::Status& error, const std::string& reason);

 private:
  struct Member {
    v1::RecordingSettings settings;
    BatchSink* sink = nullptr;
    uint64_t end_mono_ns = 0;
    // Its commands started in [start, left) of the monotonic clock, as a lone session's would:
    // none sampled before it joined (at a coarser rate), none after it was asked to stop.
    uint64_t start_mono_ns = 0;
    uint64_t left_mono_ns = UINT64_MAX;
    bool leaving = false;
    v1::LossCounters losses_at_join;  // the recorder's, cumulative: a session counts its own
    Finished finished;
  };
  // A member's share of a batch: which records (indexes into the batch) and its own counters and
  // losses. The records are not copied: the member's sink gets a BatchShare over them.
  struct Share {
    v1::RecordBatch extras;
    std::vector<uint32_t> kept;
  };
  void ShareOf(const Member& member, const BatchShare& batch, Share* share) const;
  void UpdateStopLocked();

  mutable std::mutex mu_;
  std::map<std::string, Member> members_;
  v1::LossCounters last_losses_;  // of the latest batch
  std::atomic<bool> stop_{true};
  bool closed_ = false;  // the last session left

};

}  // namespace ntprof::agent
