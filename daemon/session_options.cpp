#include "session_options.h"

namespace ntprof::agent {

const char* RoleName(Role role) { return role == Role::kHost ? "host" : "target"; }

const char* TransportName(Transport t) {
  switch (t) {
    case Transport::kTcp:
      return "tcp";
    case Transport::kRdma:
      return "rdma";
    case Transport::kLocal:
      return "local";
  }
  return "?";
}

std::optional<Role> ParseRole(const std::string& s) {
  if (s == "host") return Role::kHost;
  if (s == "target") return Role::kTarget;
  return std::nullopt;
}

std::optional<Transport> ParseTransport(const std::string& s) {
  if (s == "tcp") return Transport::kTcp;
  if (s == "rdma") return Transport::kRdma;
  if (s == "local") return Transport::kLocal;
  return std::nullopt;
}

}  // namespace ntprof::agent
