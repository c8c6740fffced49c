#include "agent_answers.h"

#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "session_lookup.h"

namespace ntprof::cli {
namespace {

bool Answered(const v1::SessionAgent& agent) {
  return agent.opened() || !agent.refusal().empty();
}

}  // namespace

v1::SessionInfo AwaitAgentAnswers(v1::Collector::StubInterface& stub,
                                  const v1::SessionInfo& started,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  v1::SessionInfo latest = started;
  while (!Unanswered(latest).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::optional<v1::SessionInfo> found;
    if (!FindSession(stub, started.name(), &found).ok() || !found) break;
    latest = *found;
  }
  return latest;
}

std::vector<std::string> Refusals(const v1::SessionInfo& session) {
  std::vector<std::string> refusals;
  for (const auto& a : session.agents()) {
    if (a.refusal().empty()) continue;
    refusals.push_back(absl::StrCat(a.hostname(), ": ", a.refusal()));
  }
  return refusals;
}

std::vector<std::string> Unanswered(const v1::SessionInfo& session) {
  std::vector<std::string> waiting;
  for (const auto& a : session.agents()) {
    if (!Answered(a)) waiting.push_back(a.hostname());
  }
  return waiting;
}

}  // namespace ntprof::cli
