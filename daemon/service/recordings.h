// Recordings: the recordings a serving agent runs, started by its collector (their messages go into
// the spool, numbered) or by a local Agent.Start (delivered only to Agent.Record callers). A role's
// BPF programs attach once per machine, so one recorder records for every session at once: it
// samples at the finest of their rates with the salt they share, and a SessionFanOut gives each
// session its own share (its rate, its filters), its own header, batches and trailer. The recorder
// starts with the first session and stops (draining what is in flight) with the last.
//
// Collector recordings go to the CollectorRing, which splits them over the collectors' spools.
//
// A collector recording leaves a marker file "<session>.recording" in the spool directory while it
// runs. A marker found at start-up means the agent died mid-recording: the interval it had not yet
// written is gone, and that is declared in-band (a SequenceGap with the reason) before anything
// else is sent, so the session's notes say it.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernel_facts.h"
#include "ntprof/v1/agent.pb.h"
#include "collector_ring.h"
#include "record_feed.h"
#include "session_fan_out.h"
#include "session_options.h"

namespace ntprof::agent {

struct AgentConfig {
  std::string name;  // this agent's hostname at the collector
  Role role = Role::kHost;
  v1::Transport transport = v1::TRANSPORT_TCP;
  std::string device;  // default device (local transport: the block device to record)
  std::string btf_path;
  double interval_s = 1;
  // SPDK binaries or PIDs recorded for the role through the probe contract's USDT probes, in
  // place of the kernel (serve --spdk): empty = the kernel's BPF programs.
  std::vector<std::string> spdk;
};

class Recordings {
 public:
  // Declares the losses of a recording an earlier run did not finish (see above).
  Recordings(AgentConfig config, CollectorRing* ring, const KernelFacts* facts);
  ~Recordings();

  // The collector's StartRecording: SessionOpened, batches, SessionClosed go into the spool, or
  // SessionClosed with the error when it cannot record. Returns at once (attaching takes time).
  void StartForCollector(const v1::RecordingSettings& settings);
  // Agent.Start: waits until the programs are attached; nothing is spooled.
  absl::StatusOr<v1::FileHeader> StartLocal(const v1::RecordingSettings& settings);
  // Stops and finalizes the session's recording; NotFound when it is not running. `reason` is who asked
  // ("stopped by the collector"): the journal's line about the end of the recording says it.
  absl::StatusOr<v1::FileTrailer> Stop(const std::string& session, const std::string& reason);
  void StopAll(const std::string& reason);

  // Collector recordings running now (AgentHello.recording_sessions).
  std::vector<std::string> CollectorSessions() const;
  std::vector<std::string> Running() const;
  // Cumulative over every recording of this run, plus the spool's own loss.
  v1::LossCounters Losses() const;
  // A feed of the named recording ("" = the one running); NotFound when none runs.
  absl::StatusOr<std::shared_ptr<RecordFeed>> Subscribe(const std::string& session);

 private:
  struct Recording;  // one session's
  struct Shared;     // the recorder and the sessions it records for
  class Sink;

  absl::StatusOr<std::shared_ptr<Recording>> Launch(const v1::RecordingSettings& settings,
                                                    bool spooled);
  // Why `settings` cannot share the running recorder; "" when it can.
  std::string Incompatibility(const Shared& shared, const v1::RecordingSettings& settings) const;
  std::string DeviceOf(const v1::RecordingSettings& settings) const;
  // The recorder's thread: starts it, opens the sessions that joined meanwhile, records.
  void RunShared(std::shared_ptr<Shared> shared, v1::RecordingSettings first);
  template <typename AnyRecorder>
  void RunSharedWith(std::shared_ptr<Shared> shared,
                     absl::StatusOr<std::unique_ptr<AnyRecorder>> recorder);
  // The session joins the recorder (now, or once it is attached); false when the recorder is
  // ending (its last session left).
  bool Join(const std::shared_ptr<Shared>& shared, std::shared_ptr<Recording> r);
  // A recorder is ending once its last session left (it drains, then is done).
  static bool EndingLocked(const Shared& shared);  // shared.mu held
  static bool Ending(Shared& shared);
  // Under shared.mu, the recorder attached: the session's header, SessionOpened, its share.
  // recording_now: the recorder already records for other sessions.
  bool OpenLocked(Shared& shared, std::shared_ptr<Recording> r, bool recording_now);
  void Fail(std::shared_ptr<Recording> r, const absl::Status& error);
  void Finish(std::shared_ptr<Recording> r, absl::StatusOr<v1::FileTrailer> result,
              const std::string& reason);
  // The recorder samples at the finest rate of the sessions it still records for.
  void UpdateRate(Shared& shared);
  // Gives the recording's Record callers the message make() builds; only built when there are
  // callers (a batch is decoded for them alone).
  void Publish(Recording& recording, const std::function<v1::RecordStreamMessage()>& make);
  void ReapLocked();
  std::filesystem::path MarkerOf(const std::string& session) const;

  AgentConfig config_;
  CollectorRing* ring_;
  const KernelFacts* facts_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Recording>> running_;
  std::shared_ptr<Shared> shared_;                // the recorder now (or last) running
  std::vector<std::shared_ptr<Shared>> finished_;  // recorder threads to join
  v1::LossCounters finished_losses_;
};

}  // namespace ntprof::agent
