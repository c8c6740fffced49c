#include "transport_name.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace ntprof {
namespace {

constexpr char kPrefix[] = "TRANSPORT_";

}  // namespace

std::string TransportName(v1::Transport transport) {
  const std::string full(v1::Transport_Name(transport));
  if (!absl::StartsWith(full, kPrefix)) return "unknown";  // a value of a newer peer: no name
  return absl::AsciiStrToLower(full.substr(sizeof(kPrefix) - 1));
}

std::optional<v1::Transport> TransportByName(const std::string& name) {
  v1::Transport t;
  if (name.empty() || name != absl::AsciiStrToLower(name)) return std::nullopt;
  if (!v1::Transport_Parse(kPrefix + absl::AsciiStrToUpper(name), &t)) return std::nullopt;
  if (t == v1::TRANSPORT_UNKNOWN) return std::nullopt;
  return t;
}

}  // namespace ntprof
