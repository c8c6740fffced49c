#include "nvme_sysfs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "block_devices.h"
#include "sysfs_line.h"

namespace ntprof::agent {

namespace fs = std::filesystem;

std::string NamespaceHeadName(const std::string& sysfs_name) {
  static const std::regex kPath(R"(nvme(\d+)c\d+n(\d+))");
  std::smatch m;
  if (std::regex_match(sysfs_name, m, kPath)) return "nvme" + m[1].str() + "n" + m[2].str();
  return sysfs_name;
}

NvmeHostView ReadNvmeHostView(const std::string& sysfs_root) {
  static const std::regex kCtrl(R"(nvme(\d+))");
  static const std::regex kNs(R"(nvme\d+(c\d+)?n\d+)");
  NvmeHostView view;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs_root + "/class/nvme", ec)) {
    std::string name = entry.path().filename();
    std::smatch m;
    if (!std::regex_match(name, m, kCtrl)) continue;
    NvmeController c;
    c.instance = std::stoi(m[1]);
    c.transport = ReadSysfsLine(entry.path() / "transport");
    c.subsysnqn = ReadSysfsLine(entry.path() / "subsysnqn");
    c.address = ReadSysfsLine(entry.path() / "address");
    c.state = ReadSysfsLine(entry.path() / "state");
    absl::SimpleAtoi(ReadSysfsLine(entry.path() / "cntlid"), &c.cntlid);
    for (const auto& sub : fs::directory_iterator(entry.path(), ec)) {
      std::string ns = sub.path().filename();
      if (!std::regex_match(ns, kNs)) continue;
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
