// sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET (Type=notify units). A no-op
// when not started by systemd.
#pragma once

#include <string>

namespace ntprof::agent {

// e.g. "READY=1", "STOPPING=1", "STATUS=...". Returns false when there is no notify socket.
bool NotifySystemd(const std::string& state);

}  // namespace ntprof::agent
