// The collector's state behind a plain C++ interface (the gRPC handlers only translate): the
// connected agents (AgentRoster), the sessions (Session), what each agent's stream already
// delivered (AgentSequences), and where a session's data goes (SessionSink: files, metrics, watch,
// ClickHouse). Everything a session stored lives under data_dir, so a restarted collector knows its
// sessions and which sequence numbers it holds, and a replaying agent is counted once.
//
//   data_dir/sessions/<name>/session.pb        the session's settings and state (session_store.h)
//   data_dir/sessions/<name>/*.ntp             its records, one file per agent (SessionFiles)
//   data_dir/agents/...                        sequence numbers held elsewhere (AgentSequences)
//   data_dir/fleet.salt                        the salt of every session (session_settings.h)
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_channel.h"
#include "agent_roster.h"
#include "agent_sequences.h"
#include "collector_metrics.h"
#include "fleet_sink.h"
#include "join_shards.h"
#include "ntprof/v1/collector.pb.h"
#include "row_writer.h"
#include "session.h"
#include "session_files.h"
#include "session_sink.h"
#include "watch_hub.h"

namespace ntprof::collector {

struct RegistryOptions {
  std::filesystem::path data_dir;
  JoinOptions join{.window_ns = 10'000'000'000, .max_pending = 1'000'000};
  std::function<int64_t()> wall_clock_ns;  // unset: CLOCK_REALTIME (tests inject their own)
  size_t watch_queue = 64;
  // The fleet store (--clickhouse): every outcome of the live join also becomes a row there, and
  // sessions whose rows may not all be in ClickHouse are reloaded from their files on Open.
  clickhouse::RowWriter* fleet = nullptr;
  // Threads the live joins run on, commands partitioned by subsystem NQN (JoinShards); 1 = on the
  // thread that ingests, as records arrive.
  size_t join_threads = 1;
  // The salt of every session that names none (--fleet-salt); 0 = the one data_dir/fleet.salt
  // holds, chosen at random the first time.
  uint64_t fleet_salt = 0;
  // The standing session (--standing-session; session() "" = none): its settings (rate, filters;
  // never a duration). It runs whenever agents are connected: every agent that connects records
  // it, and it survives collector and agent restarts. Investigations run beside it.
  v1::RecordingSettings standing;
};

// A session's stored files, for Report, Compare and Export.
struct StoredSession {
  std::string name;
  bool running = false;
  std::vector<StoredFile> files;
  std::vector<std::string> notes;  // the session's own: gaps agents declared, failed starts
};

class SessionRegistry {
 public:
  static absl::StatusOr<std::unique_ptr<SessionRegistry>> Open(RegistryOptions options,
                                                               CollectorMetrics* metrics);
  ~SessionRegistry();

  // The agent stream. AttachAgent sends the Welcome (and then restarts the running sessions the
  // agent should be recording). Errors are for the stream's status; records that cannot be used
  // are counted and acked so that a bad batch never blocks an agent. Ingest keeps the message's
  // records (moved, not copied, into the file and the join).
  absl::StatusOr<v1::Welcome> AttachAgent(AgentChannel* channel, const v1::AgentHello& hello,
                                          const std::string& peer);
  void DetachAgent(AgentChannel* channel);
  absl::StatusOr<v1::Ack> Ingest(AgentChannel* channel, v1::AgentMessage message);

  absl::StatusOr<v1::SessionInfo> StartSession(const v1::StartSessionRequest& request);
  absl::StatusOr<v1::SessionInfo> StopSession(const std::string& name);
  // OK when Watch may follow the session ("" = every running one): it exists and is running.
  absl::Status Watchable(const std::string& name) const;
  v1::ListSessionsReply List() const;
  absl::StatusOr<StoredSession> Stored(const std::string& name) const;
  uint64_t fleet_salt() const { return fleet_salt_; }
  // The standing session's name, "" when there is none: what `watch` with no name follows.
  const std::string& standing_session() const { return options_.standing.session(); }

  WatchHub& watch() { return watch_; }
  // About once a second: expires the live joins, ends sessions past their duration, emits watch
  // intervals.
  void Tick();
  int64_t Now() const { return options_.wall_clock_ns(); }

 private:
  SessionRegistry(RegistryOptions options, CollectorMetrics* metrics);
  absl::Status Load();
  // Creates the standing session, or checks the stored one has the configured settings; a
  // standing session no longer configured stops.
  absl::Status OpenStanding();
  std::unique_ptr<Session> NewSession(v1::SessionInfo info);
  absl::Status Persist(const Session& session) const;
  v1::SessionInfo InfoOf(const Session& session) const;
  // Sends the session's settings to one of its agents.
  void SendStart(const Session& session, const ConnectedAgentEntry& agent, v1::Role role) const;
  void StopLocked(Session* session);
  void RecordFailure(Session* session, const ConnectedAgentEntry& agent, const std::string& why);
  void NoteLost(const AgentKey& agent, const v1::SequenceGap& gap);
  // Moves the message's records into the session's sinks and join.
  absl::Status Store(const ConnectedAgentEntry& agent, v1::AgentMessage& message);
  absl::Status StoreBatch(const ConnectedAgentEntry& agent, Session* session,
                          v1::SessionBatch* batch);

  RegistryOptions options_;
  CollectorMetrics* metrics_;
  uint64_t fleet_salt_ = 0;
  WatchHub watch_;
  // Where sessions' data goes, files first; fleet_ is one of them (or null).
  std::vector<std::unique_ptr<SessionSink>> sink_owners_;
  std::vector<SessionSink*> sinks_;
  FleetSink* fleet_ = nullptr;
  mutable std::mutex mu_;
  AgentRoster agents_;
  AgentSequences sequences_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  // Last: its threads stop (after running what is queued) before the sessions they join go.
  std::unique_ptr<JoinShards> shards_;
};

}  // namespace ntprof::collector
