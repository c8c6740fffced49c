#include "session.h"

namespace ntprof::collector {

Session::Session(v1::SessionInfo session_info, const std::filesystem::path& dir,
                 JoinShards* shards, const JoinOptions& join,
                 const std::vector<SessionSink*>& sinks)
    : info(std::move(session_info)), files(std::make_unique<SessionFiles>(dir)) {
  join_sides = JoinsSides();
  // Runs on the join threads (JoinShards): the sinks are safe from several at once.
  auto fan_out = [this, sinks](const v1::Record* host, const v1::Record* target) {
    const bool local = host && host->transport() == v1::TRANSPORT_LOCAL;
    const CommandOutcome outcome{host, target, !join_sides || (host && target) || local,
                                 fleet_reloading.load()};
    for (SessionSink* sink : sinks) sink->OnCommand(*this, outcome);
  };
  joins = std::make_unique<SessionJoins>(shards, join_sides, join, fan_out);
}

bool Session::JoinsSides() const {
  bool hosts = false, targets = false;
  for (const auto& a : info.agents()) {
    hosts |= a.role() == v1::ROLE_HOST;
    targets |= a.role() == v1::ROLE_TARGET;
  }
  return hosts && targets;
}

v1::SessionAgent* Session::AgentEntry(const std::string& hostname, v1::Role role) {
  for (auto& a : *info.mutable_agents()) {
    if (a.hostname() == hostname) return &a;
  }
  v1::SessionAgent* a = info.add_agents();
  a->set_hostname(hostname);
  a->set_role(role);
  if (JoinsSides() != join_sides) {
    join_sides = !join_sides;
    joins->SetJoinSides(join_sides);
  }
  return a;
}

int64_t Session::EndNs() const {
  if (settings().duration_s() == 0) return 0;
  return static_cast<int64_t>(info.start_wall_ns()) +
         int64_t{settings().duration_s()} * 1'000'000'000;
}

}  // namespace ntprof::collector
