// Where a session's data goes: its files, the Prometheus metrics, watch and the fleet store
// (ClickHouse) each implement SessionSink, and the registry hands every sink the same two things:
// each batch an agent sent (impossible records already dropped) and each outcome of the session's
// live join. A new destination is one new sink, added in SessionRegistry::Open.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "agent_key.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::collector {

struct Session;

// One outcome of a session's live join.
struct CommandOutcome {
  const v1::Record* host = nullptr;
  const v1::Record* target = nullptr;
  // Every half the command can have: a pair, a record of a session recorded on one side only, or
  // a local block device's record (it has no target side). Else a leftover half of a joined
  // session, counted but not summarized (as in the file report).
  bool complete = false;
  // Fed again from the stored files by a restarted collector: only the fleet store wants it.
  bool reloaded = false;
};

class SessionSink {
 public:
  virtual ~SessionSink() = default;
  // An agent's batch for the session, under the registry's lock. An error leaves the batch
  // unacked, so the agent replays it (the files' disk failing): no other sink returns one.
  virtual absl::Status OnBatch(Session& session, const AgentKey& agent,
                               const v1::RecordBatch& batch) {
    (void)session, (void)agent, (void)batch;
    return absl::OkStatus();
  }
  // One outcome of the session's join, on the join threads (several at once, one per shard).
  virtual void OnCommand(Session& session, const CommandOutcome& outcome) {
    (void)session, (void)outcome;
  }
};

}  // namespace ntprof::collector
