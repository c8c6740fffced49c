// Recordings: the recordings a serving agent runs, started by its collector (their messages go into
// the spool, numbered) or by a local Agent.Start (delivered only to Agent.Record callers). One at a
// time: a role's BPF programs attach once per machine.
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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernel_facts.h"
#include "ntprof/v1/agent.pb.h"
#include "record_feed.h"
#include "session_options.h"
#include "collector_ring.h"

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
  // Stops and finalizes the recording; NotFound when it is not running. `reason` is who asked
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
  struct Recording;
  class Sink;

  absl::StatusOr<std::shared_ptr<Recording>> Launch(const v1::RecordingSettings& settings,
                                                    bool spooled);
  void Run(std::shared_ptr<Recording> recording);
  template <typename AnyRecorder>
  void RunWith(std::shared_ptr<Recording> recording,
               absl::StatusOr<std::unique_ptr<AnyRecorder>> recorder);
  void Publish(Recording& recording, const v1::RecordStreamMessage& message);
  void ReapLocked();
  std::filesystem::path MarkerOf(const std::string& session) const;

  AgentConfig config_;
  CollectorRing* ring_;
  const KernelFacts* facts_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Recording>> running_;
  std::vector<std::shared_ptr<Recording>> finished_;  // threads to join
  v1::LossCounters finished_losses_;
};

}  // namespace ntprof::agent
