// The connected agents: one per machine (hostname), each behind the channel its stream gave, with
// what it said in its AgentHello.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent_channel.h"
#include "agent_key.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

struct ConnectedAgentEntry {
  AgentChannel* channel = nullptr;
  v1::AgentHello hello;
  AgentKey key;
  std::string peer;
};

std::string RoleName(v1::Role role);  // "host", "target", "unknown"

class AgentRoster {
 public:
  // OK when the hello can identify an agent; else what is wrong with it.
  static absl::Status CheckHello(const v1::AgentHello& hello);

  // A second stream from the same machine replaces the first (the old one is likely half-open).
  const ConnectedAgentEntry& Attach(AgentChannel* channel, const v1::AgentHello& hello,
                                    const std::string& peer);
  // The hostname of the agent that left; "" when the channel was not (or no longer) attached.
  std::string Detach(AgentChannel* channel);

  const ConnectedAgentEntry* Find(AgentChannel* channel) const;
  const ConnectedAgentEntry* Find(const std::string& hostname) const;
  void ForEach(const std::function<void(const ConnectedAgentEntry&)>& fn) const;
  size_t size() const { return agents_.size(); }
  // "host1 (host), target1 (target)", or "none".
  std::string Describe() const;

 private:
  std::map<AgentChannel*, ConnectedAgentEntry> agents_;
};

}  // namespace ntprof::collector
