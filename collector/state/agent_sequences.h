// What each agent stream (hostname, epoch) delivered, by sequence number (SequenceTracker), and
// the numbers held outside the session files, written down so a restarted collector knows them:
//
//   data_dir/agents/<hostname>-<epoch>.lost    numbers agents declared lost
//   data_dir/agents/<hostname>-<epoch>.dropped numbers acked but stored nowhere (no such session)
#pragma once

#include <filesystem>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "agent_key.h"
#include "ntprof/v1/collector.pb.h"
#include "sequence_tracker.h"

namespace ntprof::collector {

class AgentSequences {
 public:
  explicit AgentSequences(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // What the session files hold (*held) and the .lost / .dropped files say.
  void Load(const std::map<AgentKey, std::set<uint64_t>>& held);

  SequenceTracker& Of(const AgentKey& agent) { return trackers_[agent]; }
  const SequenceTracker* Find(const AgentKey& agent) const;
  // The agent will never send gap.first..gap.last.
  void DeclareLost(const AgentKey& agent, const v1::SequenceGap& gap);
  // A message acked but not stored (it fits no session) is still held: a restarted collector must
  // not ask for it again.
  absl::Status RememberDropped(const AgentKey& agent, uint64_t seq);

 private:
  // Appends "first last" to dir/<hostname>-<epoch>.<kind>, the files Load reads back.
  absl::Status Append(const AgentKey& agent, const char* kind, uint64_t first, uint64_t last);

  std::filesystem::path dir_;
  std::map<AgentKey, SequenceTracker> trackers_;
};

}  // namespace ntprof::collector
