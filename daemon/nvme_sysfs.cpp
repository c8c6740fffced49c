#include "nvme_sysfs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "block_devices.h"
#include "sysfs_line.h"

namespace ntprof::agent {

namespace fs = std::filesystem;

namespace {

// The decimal number at the front of `text` (at most 9 digits), taken off it.
std::optional<int> TakeNumber(std::string_view& text) {
  size_t n = 0;
  while (n < text.size() && n < 10 && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 0 || n > 9) return std::nullopt;
  int value = 0;
  for (size_t i = 0; i < n; ++i) value = value * 10 + (text[i] - '0');
  text.remove_prefix(n);
  return value;
}

// `text` with `prefix` taken off its front, when it starts with it.
bool TakePrefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::optional<NvmeDeviceName> ParseNvmeDeviceName(std::string_view name) {
  NvmeDeviceName out;
  if (!TakePrefix(name, "nvme")) return std::nullopt;
  std::optional<int> instance = TakeNumber(name);
  if (!instance) return std::nullopt;
  out.instance = *instance;
  if (TakePrefix(name, "c") && !(out.path_controller = TakeNumber(name))) return std::nullopt;
  if (TakePrefix(name, "n") && !(out.ns = TakeNumber(name))) return std::nullopt;
  // nothing may follow, and a path (cY) always names its namespace
  if (!name.empty() || (out.path_controller && !out.ns)) return std::nullopt;
  return out;
}

std::string NamespaceHeadName(const std::string& sysfs_name) {
  std::optional<NvmeDeviceName> n = ParseNvmeDeviceName(sysfs_name);
  if (!n || !n->path_controller) return sysfs_name;
  return "nvme" + std::to_string(n->instance) + "n" + std::to_string(*n->ns);
}

NvmeHostView ReadNvmeHostView(const std::string& sysfs_root) {
  NvmeHostView view;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs_root + "/class/nvme", ec)) {
    std::string name = entry.path().filename();
    std::optional<NvmeDeviceName> ctrl = ParseNvmeDeviceName(name);
    if (!ctrl || ctrl->ns) continue;  // a controller: nvmeX
    NvmeController c;
    c.instance = ctrl->instance;
    c.transport = ReadSysfsLine(entry.path() / "transport");
    c.subsysnqn = ReadSysfsLine(entry.path() / "subsysnqn");
    c.address = ReadSysfsLine(entry.path() / "address");
    c.state = ReadSysfsLine(entry.path() / "state");
    absl::SimpleAtoi(ReadSysfsLine(entry.path() / "cntlid"), &c.cntlid);
    for (const auto& sub : fs::directory_iterator(entry.path(), ec)) {
      std::string ns = sub.path().filename();
      std::optional<NvmeDeviceName> ns_name = ParseNvmeDeviceName(ns);
      if (!ns_name || !ns_name->ns) continue;
      // A multipath path (nvme0c0n1) is hidden and has no dev_t: I/O is recorded against its
      // namespace head (nvme0n1), which has one.
      std::string head = NamespaceHeadName(ns);
      auto dev = ParseMajorMinor(ReadSysfsLine(sub.path() / "dev"));
      if (!dev) dev = ParseMajorMinor(ReadSysfsLine(fs::path(sysfs_root) / "class/block" / head / "dev"));
      if (!dev) continue;
      view.namespaces.push_back({*dev, ns, head, c.instance});
    }
    view.controllers[c.instance] = c;
  }
  return view;
}

std::string NamespaceDeviceName(const std::string& device) {
  if (device.rfind('/', 0) != 0) return device;
  std::error_code ec;
  fs::path resolved = fs::canonical(device, ec);
  return (ec ? fs::path(device) : resolved).filename();
}

std::vector<uint32_t> NvmeHostView::DevicesOn(const std::string& transport,
                                              const std::string& device_given) const {
  const std::string device = NamespaceDeviceName(device_given);
  std::vector<uint32_t> out;
  for (const NvmeNamespaceDevice& ns : namespaces) {
    auto c = controllers.find(ns.controller);
    if (c == controllers.end() || c->second.transport != transport) continue;
    if (!device.empty() && device != ns.name && device != ns.sysfs_name) continue;
    out.push_back(ns.kernel_dev);
  }
  return out;
}

const NvmeNamespaceDevice* NvmeHostView::FindDevice(uint32_t kernel_dev) const {
  for (const NvmeNamespaceDevice& ns : namespaces) {
    if (ns.kernel_dev == kernel_dev) return &ns;
  }
  return nullptr;
}

}  // namespace ntprof::agent
