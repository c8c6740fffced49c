#include "device_events.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace ntprof::agent {

absl::StatusOr<DeviceEvents> DeviceEvents::Open() {
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  if (fd < 0)
    return absl::UnavailableError(std::string("kernel device events: socket: ") +
                                  std::strerror(errno));
  sockaddr_nl addr = {};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1;  // the kernel's own events (udev's re-broadcasts are group 2)
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(std::string("kernel device events: bind: ") +
                                  std::strerror(err));
  }
  return DeviceEvents(fd);
}

DeviceEvents::DeviceEvents(DeviceEvents&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

DeviceEvents& DeviceEvents::operator=(DeviceEvents&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DeviceEvents::~DeviceEvents() {
  if (fd_ >= 0) close(fd_);
}

bool DeviceEvents::Drain() {
  bool any = false;
  char buf[8192];
  while (true) {
    ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      any = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOBUFS) {  // events were dropped: what changed is unknown
      any = true;
      continue;
    }
    return any;  // EAGAIN: nothing more
  }
}

}  // namespace ntprof::agent
