#include "agent_roster.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ntprof::collector {

std::string RoleName(v1::Role role) {
  return role == v1::ROLE_HOST ? "host" : role == v1::ROLE_TARGET ? "target" : "unknown";
}

absl::Status AgentRoster::CheckHello(const v1::AgentHello& hello) {
  if (hello.hostname().empty() || hello.hostname().find('/') != std::string::npos) {
    return absl::InvalidArgumentError("AgentHello needs a hostname (without '/')");
  }
  if (hello.role() != v1::ROLE_HOST && hello.role() != v1::ROLE_TARGET) {
    return absl::InvalidArgumentError("AgentHello needs a role: ROLE_HOST or ROLE_TARGET");
  }
  return absl::OkStatus();
}

const ConnectedAgentEntry& AgentRoster::Attach(AgentChannel* channel, const v1::AgentHello& hello,
                                               const std::string& peer) {
  std::erase_if(agents_, [&](const auto& entry) {
    return entry.second.hello.hostname() == hello.hostname();
  });
  ConnectedAgentEntry& agent = agents_[channel];
  agent.channel = channel;
  agent.hello = hello;
  agent.key = AgentKey{hello.hostname(), hello.stream_epoch()};
  agent.peer = peer;
  return agent;
}

std::string AgentRoster::Detach(AgentChannel* channel) {
  auto it = agents_.find(channel);
  if (it == agents_.end()) return "";
  std::string hostname = it->second.hello.hostname();
  agents_.erase(it);
  return hostname;
}

const ConnectedAgentEntry* AgentRoster::Find(AgentChannel* channel) const {
  auto it = agents_.find(channel);
  return it == agents_.end() ? nullptr : &it->second;
}

const ConnectedAgentEntry* AgentRoster::Find(const std::string& hostname) const {
  for (const auto& [channel, agent] : agents_) {
    if (agent.hello.hostname() == hostname) return &agent;
  }
  return nullptr;
}

void AgentRoster::ForEach(const std::function<void(const ConnectedAgentEntry&)>& fn) const {
  for (const auto& [channel, agent] : agents_) fn(agent);
}

std::string AgentRoster::Describe() const {
  std::vector<std::string> connected;
  for (const auto& [channel, agent] : agents_) {
    connected.push_back(
        absl::StrCat(agent.hello.hostname(), " (", RoleName(agent.hello.role()), ")"));
  }
  return connected.empty() ? "none" : absl::StrJoin(connected, ", ");
}

}  // namespace ntprof::collector
