#include "session_options.h"

namespace ntprof::agent {

const char* RoleName(Role role) { return role == Role::kHost ? "host" : "target"; }

std::optional<Role> ParseRole(const std::string& s) {
  if (s == "host") return Role::kHost;
  if (s == "target") return Role::kTarget;
  return std::nullopt;
}

v1::Role ToProto(Role role) { return role == Role::kHost ? v1::ROLE_HOST : v1::ROLE_TARGET; }

}  // namespace ntprof::agent
