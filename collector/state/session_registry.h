// The collector's state behind a plain C++ interface (the gRPC handlers only translate): the
// connected agents, the sessions, what each agent's stream already delivered, the live join and
// watch. Everything a session stored lives under data_dir, so a restarted collector knows its
// sessions and which sequence numbers it holds, and a replaying agent is counted once.
//
//   data_dir/sessions/<name>/session.pb        the session's settings and state (SessionInfo)
//   data_dir/sessions/<name>/*.ntp             its records, one file per agent (SessionFiles)
//   data_dir/agents/<hostname>-<epoch>.lost    sequence numbers agents declared lost
//   data_dir/agents/<hostname>-<epoch>.dropped numbers acked but stored nowhere (no such session)
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
#include "collector_metrics.h"
#include "join_shards.h"
#include "live_join.h"
#include "row_writer.h"
#include "ntprof/v1/collector.pb.h"
#include "sequence_tracker.h"
#include "session_files.h"
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

  WatchHub& watch() { return watch_; }
  // About once a second: expires the live joins, ends sessions past their duration, emits watch
  // intervals.
  void Tick();
  int64_t Now() const { return options_.wall_clock_ns(); }

 private:
  struct Session;
  struct Agent {
    v1::AgentHello hello;
    AgentKey key;
    std::string peer;
  };

  SessionRegistry(RegistryOptions options, CollectorMetrics* metrics);
  absl::Status Load();
  std::unique_ptr<Session> NewSession(v1::SessionInfo info);
  absl::Status Persist(const Session& session) const;
  v1::SessionInfo InfoOf(const Session& session) const;
  void StopLocked(Session* session);
  // The session's joins, one per shard: records go to their subsystem's shard; fn runs on every
  // shard's join once that shard ran what was queued for it.
  void Join(Session* session, google::protobuf::RepeatedPtrField<v1::Record>* records, int64_t now);
  void ForEachJoin(const Session& session, const std::function<void(LiveJoin&)>& fn) const;
  JoinStats JoinStatsOf(const Session& session) const;
  // Expires the session's joins (halves older than the window leave); what still waits.
  size_t ExpireJoins(const Session& session, int64_t now) const;
  // The session owes rows to ClickHouse from now on: its marker makes a restart reload it.
  absl::Status OweFleetRows(Session* session);
  // Feeds a session's stored records through its join again, for the fleet store only.
  void ReloadIntoFleet(Session* session);
  void TickFleet(int64_t now);
  void RecordFailure(Session* session, const Agent& agent, const std::string& why);
  // Moves the message's records into the session's file and join.
  absl::Status Store(const Agent& agent, v1::AgentMessage& message);
  absl::Status StoreBatch(const Agent& agent, Session* session, v1::SessionBatch* batch);
  void RememberLost(const AgentKey& agent, const v1::SequenceGap& gap);
  absl::Status RememberDropped(const AgentKey& agent, uint64_t seq);
  absl::Status AppendSequences(const AgentKey& agent, const char* kind, uint64_t first,
                               uint64_t last);
  const Agent* ConnectedHost(const std::string& hostname) const;

  RegistryOptions options_;
  CollectorMetrics* metrics_;
  WatchHub watch_;
  mutable std::mutex mu_;
  std::map<AgentChannel*, Agent> agents_;
  std::map<AgentKey, SequenceTracker> sequences_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  clickhouse::WriterStats fleet_seen_;  // what Tick already added to the metrics
  // Last: its threads stop (after running what is queued) before the sessions they join go.
  std::unique_ptr<JoinShards> shards_;
};

}  // namespace ntprof::collector
