// One session at the collector: its settings and state (SessionInfo, persisted as session.pb),
// its stored files, its live join, and what its agents declared (losses, gaps, failures).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent_key.h"
#include "ntprof/v1/collector.pb.h"
#include "session_files.h"
#include "session_joins.h"
#include "session_sink.h"

namespace ntprof::collector {

struct Session {
  // Its files under dir; its join's outcomes go to every sink.
  Session(v1::SessionInfo info, const std::filesystem::path& dir, JoinShards* shards,
          const JoinOptions& join, const std::vector<SessionSink*>& sinks);

  v1::SessionInfo info;  // what is persisted: settings, state, selected agents
  std::unique_ptr<SessionFiles> files;
  std::unique_ptr<SessionJoins> joins;
  std::map<AgentKey, v1::LossCounters> losses;  // latest cumulative, per agent stream
  std::vector<std::string> notes;
  std::atomic<bool> join_sides = false;  // read by the join threads
  // The fleet store (FleetSink): the marker file stays until the rows up to fleet_last_ticket
  // were accepted and nothing was dropped. Atomic: the join threads write rows while the
  // registry's lock holder looks.
  std::atomic<bool> fleet_reloading = false;
  std::atomic<bool> fleet_pending = false;
  std::atomic<uint64_t> fleet_last_ticket = 0;
  std::mutex fleet_mu;  // marking and clearing the marker file
  uint64_t fleet_drops_at_start = 0;  // under fleet_mu

  const std::string& name() const { return info.name(); }
  const v1::RecordingSettings& settings() const { return info.settings(); }
  bool running() const { return info.state() == v1::SESSION_RUNNING; }
  // The agent's entry among the session's agents (added when it was not chosen at the start, or
  // when it connects to the standing session).
  v1::SessionAgent* AgentEntry(const std::string& hostname, v1::Role role);
  // Whether the session has agents of both roles, so its live join pairs halves; recomputed when
  // an agent is added.
  bool JoinsSides() const;
  // Wall-clock end of a session with a duration; 0 = none.
  int64_t EndNs() const;
};

}  // namespace ntprof::collector
