// The agent's unix socket on disk: its directory, a stale socket left by a killed agent, and who
// may connect (mode 0660, group `ntprof` when that group exists, so members run ntprofctl without
// root).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace ntprof::agent {

// Creates the socket's directory (0750, or 0755 when there is no such group), removes a stale
// socket, and refuses when a live agent already serves on path.
absl::Status PrepareSocketPath(const std::string& path, const std::string& group);
// After bind: mode 0660 and the group.
absl::Status SecureSocket(const std::string& path, const std::string& group);

}  // namespace ntprof::agent
