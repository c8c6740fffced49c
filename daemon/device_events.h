// DeviceEvents: tells the recorder when the machine's devices may have changed, from the kernel's
// device events (the uevents udev listens to: a block device or an NVMe controller added, removed
// or changed), so it re-reads sysfs and configfs only then instead of every interval. Reading the
// NVMe host view and the watched set every second was most of what an idle agent
// cost under emulation (docs/lab/overhead-log.md, ninth pass).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

namespace ntprof::agent {

class DeviceEvents {
 public:
  // A non-blocking listener on the kernel's uevent multicast group.
  static absl::StatusOr<DeviceEvents> Open();

  DeviceEvents(DeviceEvents&& other) noexcept;
  DeviceEvents& operator=(DeviceEvents&& other) noexcept;
  DeviceEvents(const DeviceEvents&) = delete;
  DeviceEvents& operator=(const DeviceEvents&) = delete;
  ~DeviceEvents();

  // Reads every event that arrived since the last call, without waiting. True when there was at
  // least one, or when events were lost (the socket's buffer overflowed): either way the caller
  // must look again.
  bool Drain();

 private:
  explicit DeviceEvents(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace ntprof::agent
