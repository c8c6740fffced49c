// Who sent a record stream: the agent's hostname and the epoch of its sequence numbers.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace ntprof::collector {

struct AgentKey {
  std::string hostname;
  uint64_t epoch = 0;
  bool operator<(const AgentKey& o) const {
    return std::tie(hostname, epoch) < std::tie(o.hostname, o.epoch);
  }
  bool operator==(const AgentKey& o) const = default;
};

}  // namespace ntprof::collector
