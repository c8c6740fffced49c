// A started session's agents answer on their own streams to the collector, after StartSession has
// returned: SessionOpened, or a refusal (a session with its own salt beside others, a required hook
// missing). `ntprofctl start` waits for those answers so that a refusal reaches the user instead
// of a session listed as running that records nothing.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {

// Polls the collector until every agent of `started` answered or `timeout` passed; returns the
// session as last listed (`started` itself when it could not be listed).
v1::SessionInfo AwaitAgentAnswers(v1::Collector::StubInterface& stub,
                                  const v1::SessionInfo& started,
                                  std::chrono::milliseconds timeout);

// "host1: why" for each agent that refused.
std::vector<std::string> Refusals(const v1::SessionInfo& session);
// The hostnames of the agents that did not answer yet.
std::vector<std::string> Unanswered(const v1::SessionInfo& session);

}  // namespace ntprof::cli
