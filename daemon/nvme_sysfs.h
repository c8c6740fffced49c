// What sysfs says about NVMe-oF on this machine: on a host, the controllers
// (/sys/class/nvme/nvmeN: subsysnqn, cntlid, transport, address) and their namespace block devices.
// Re-read on the kernel's device events (device_events.h), so a reconnect (new cntlid) is seen.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ntprof::agent {

struct NvmeController {
  int instance = -1;       // N of nvmeN
  std::string transport;   // "tcp", "rdma", "pcie", "loop", ...
  std::string subsysnqn;
  uint32_t cntlid = 0;
  std::string address;     // "traddr=192.168.100.1,trsvcid=4420,..."
  std::string state;       // "live", "connecting", ...
};

// A namespace of a controller: nvmeXnY (no multipath) or the hidden path device nvmeXcYnZ
// (native multipath), known by its namespace head nvmeXnZ, whose dev_t is the one recorded.
struct NvmeNamespaceDevice {
  uint32_t kernel_dev = 0;  // of the head (the path device has none in sysfs)
  std::string sysfs_name;  // nvme0c0n1
  std::string name;        // nvme0n1
  int controller = -1;
};

struct NvmeHostView {
  std::map<int, NvmeController> controllers;  // by instance
  std::vector<NvmeNamespaceDevice> namespaces;

  // Devices of controllers on `transport`, optionally only those named `device` (nvme0n1,
  // /dev/nvme0n1 or a link to it: see NamespaceDeviceName).
  std::vector<uint32_t> DevicesOn(const std::string& transport, const std::string& device) const;
  const NvmeNamespaceDevice* FindDevice(uint32_t kernel_dev) const;
};

NvmeHostView ReadNvmeHostView(const std::string& sysfs_root = "/sys");

// The name a namespace device has in sysfs, from how a user may give it: nvme0n1 as is;
// /dev/nvme0n1 (what `nvme list` prints) or a link to it (/dev/disk/by-id/nvme-...) by the name
// of the file it resolves to.
std::string NamespaceDeviceName(const std::string& device);

// An NVMe device's name in sysfs, in parts: nvmeX (controller X), nvmeXnY (namespace Y: of
// controller X, or with native multipath its head, X then being the subsystem's instance) and
// nvmeXcYnZ (the hidden path of head nvmeXnZ through controller Y).
struct NvmeDeviceName {
  int instance = -1;                  // X
  std::optional<int> path_controller;  // Y of cY
  std::optional<int> ns;              // the namespace's n
};

// The parts of `name`, or nothing for any other name. Parsed by hand: a rescan reads every entry
// of every controller's directory, and std::regex took thousands of instructions a name.
std::optional<NvmeDeviceName> ParseNvmeDeviceName(std::string_view name);

// nvmeXcYnZ -> nvmeXnZ; other names unchanged.
std::string NamespaceHeadName(const std::string& sysfs_name);

}  // namespace ntprof::agent
