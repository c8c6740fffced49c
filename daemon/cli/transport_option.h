// --transport of probe, record and serve, and the argument rules that go with it: the names, the
// help and the rules all come from the transport registry (transports.h), so a new row shows up
// in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "absl/strings/str_replace.h"
#include "transports.h"

namespace ntprof::daemon_cli {

inline CLI::Option* AddTransportOption(CLI::App* cmd, std::string* transport) {
  return cmd->add_option("--transport", *transport, agent::TransportHelp())
      ->check(CLI::IsMember(agent::TransportNames()))
      ->capture_default_str();
}

// A manual page with the transports' names ("tcp|rdma|local") in place of {transports}.
inline std::string WithTransportChoices(const std::string& page) {
  return absl::StrReplaceAll(page, {{"{transports}", agent::TransportChoices()}});
}

// The registry's rules for these flags (agent::CheckTransportArguments) as a flag error: the
// command prints its usage and the rule, and exits 2. `recording`: record and serve (a local
// transport needs --device), not probe.
inline void CheckTransportFlags(const std::string& role, const std::string& transport,
                                const std::string& device, bool recording) {
  const std::optional<v1::Transport> t = agent::ParseTransport(transport);
  if (!t) throw CLI::ValidationError("--transport " + transport, "is not supported by this build");
  const std::optional<agent::Role> r = agent::ParseRole(role);
  if (!r) throw CLI::RequiredError("--role");
  const std::string problem = agent::CheckTransportArguments(*r, *t, device, recording);
  if (!problem.empty()) throw CLI::ValidationError(problem);
}

}  // namespace ntprof::daemon_cli
