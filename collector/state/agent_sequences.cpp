#include "agent_sequences.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ntprof::collector {

void AgentSequences::Load(const std::map<AgentKey, std::set<uint64_t>>& held) {
  for (const auto& [agent, seqs] : held) {
    SequenceTracker& tracker = trackers_[agent];
    for (uint64_t seq : seqs) tracker.Accept(seq);
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().stem().string();
    const size_t dash = name.rfind('-');
    AgentKey key;
    const bool lost = entry.path().extension() == ".lost";
    const bool dropped = entry.path().extension() == ".dropped";
    if ((!lost && !dropped) || dash == std::string::npos ||
        !absl::SimpleHexAtoi(name.substr(dash + 1), &key.epoch)) {
      continue;
    }
    key.hostname = name.substr(0, dash);
    std::ifstream in(entry.path());
    uint64_t first = 0, last = 0;
    while (in >> first >> last) {
      if (lost) {
        trackers_[key].DeclareLost(first, last);
      } else {
        for (uint64_t seq = first; seq <= last; ++seq) trackers_[key].Accept(seq);
      }
    }
  }
}

const SequenceTracker* AgentSequences::Find(const AgentKey& agent) const {
  auto it = trackers_.find(agent);
  return it == trackers_.end() ? nullptr : &it->second;
}

void AgentSequences::DeclareLost(const AgentKey& agent, const v1::SequenceGap& gap) {
  trackers_[agent].DeclareLost(gap.first(), gap.last());
  (void)Append(agent, "lost", gap.first(), gap.last());
}

absl::Status AgentSequences::RememberDropped(const AgentKey& agent, uint64_t seq) {
  return Append(agent, "dropped", seq, seq);
}

absl::Status AgentSequences::Append(const AgentKey& agent, const char* kind, uint64_t first,
                                    uint64_t last) {
  const auto path = dir_ / absl::StrFormat("%s-%016x.%s", agent.hostname, agent.epoch, kind);
  std::ofstream out(path, std::ios::app);
  out << first << " " << last << "\n";
  if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

}  // namespace ntprof::collector
