// The name of a transport as command lines, logs and reports write it ("tcp", "rdma", "local"): the
// ntprof.v1.Transport value's own name without its TRANSPORT_ prefix, in lower case. Read from the
// proto enum, so a new transport needs nothing here.
#pragma once

#include <optional>
#include <string>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

// "tcp" for TRANSPORT_TCP ...; "unknown" for TRANSPORT_UNKNOWN and values this build does not know.
std::string TransportName(v1::Transport transport);
// The transport named `name` ("tcp"); nullopt for "unknown" and names of no transport.
std::optional<v1::Transport> TransportByName(const std::string& name);

}  // namespace ntprof
