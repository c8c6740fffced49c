#include "nvmet_backends.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sysfs_line.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

// The sysfs directory of the whole disk holding dev (a partition's parent): the queue is the disk's.
fs::path DiskDirectory(dev_t dev, const std::string& sysfs_root) {
  std::error_code ec;
  fs::path dir = fs::canonical(sysfs_root + "/dev/block/" + std::to_string(major(dev)) + ":" +
                                   std::to_string(minor(dev)),
                               ec);
  if (ec) return {};
  if (fs::exists(dir / "partition", ec)) dir = dir.parent_path();
  return dir;
}

const char* T2Source(NamespaceBackend b) {
  switch (b) {
    case NamespaceBackend::kRequestBased:
      return "request";
    case NamespaceBackend::kNeedsBioQueue:
      return "block_bio_queue";
    case NamespaceBackend::kFile:
      return "nvmet_file_execute_rw";
  }
  return "?";
}

}  // namespace

NamespaceBackend ClassifyBackingDevice(const std::string& device_path, const std::string& sysfs_root,
                                       std::string* why) {
  struct stat st;
  if (::stat(device_path.c_str(), &st) != 0) {
    *why = "cannot stat " + device_path + ": " + std::strerror(errno);
    return NamespaceBackend::kNeedsBioQueue;
  }
  if (S_ISREG(st.st_mode)) {
    *why = "a file";
    return NamespaceBackend::kFile;
  }
  if (!S_ISBLK(st.st_mode)) {
    *why = "neither a block device nor a file";
    return NamespaceBackend::kNeedsBioQueue;
  }
  fs::path disk = DiskDirectory(st.st_rdev, sysfs_root);
  std::error_code ec;
  if (disk.empty()) {
    *why = "not in " + sysfs_root + "/dev/block";
    return NamespaceBackend::kNeedsBioQueue;
  }
  // blk-mq disks, and only they, register their hardware queues under mq/
  if (!fs::is_directory(disk / "mq", ec)) {
    *why = "bio-based (" + disk.filename().string() + " has no mq/)";
    return NamespaceBackend::kNeedsBioQueue;
  }
  if (ReadSysfsLine(disk / "queue" / "iostats") != "1") {
    *why = "blk-mq with queue/iostats off (the request carries no start time)";
    return NamespaceBackend::kNeedsBioQueue;
  }
  *why = "blk-mq, iostats on";
  return NamespaceBackend::kRequestBased;
}

NvmetBackends ReadNvmetBackends(const std::string& configfs_root, const std::string& sysfs_root) {
  NvmetBackends out;
  std::error_code ec;
  fs::directory_iterator subsystems(configfs_root + "/nvmet/subsystems", ec);
  if (ec) return out;
  out.configfs_readable = true;
  for (const fs::directory_entry& s : subsystems) {
    fs::directory_iterator namespaces(s.path() / "namespaces", ec);
    if (ec) continue;  // removed while we read
    for (const fs::directory_entry& n : namespaces) {
      if (ReadSysfsLine(n.path() / "enable") != "1") continue;
      NvmetNamespace ns;
      ns.subsystem = s.path().filename().string();
      ns.nsid = n.path().filename().string();
      ns.device_path = ReadSysfsLine(n.path() / "device_path");
      ns.backend = ClassifyBackingDevice(ns.device_path, sysfs_root, &ns.why);
      out.namespaces.push_back(std::move(ns));
    }
  }
  // configfs lists in no particular order: by subsystem, then namespace id
  std::sort(out.namespaces.begin(), out.namespaces.end(), [](const auto& a, const auto& b) {
    if (a.subsystem != b.subsystem) return a.subsystem < b.subsystem;
    if (a.nsid.size() != b.nsid.size()) return a.nsid.size() < b.nsid.size();
    return a.nsid < b.nsid;
  });
  return out;
}

bool NvmetBackends::NeedsBioQueue() const { return !BioQueueReasons().empty(); }

std::vector<std::string> NvmetBackends::BioQueueReasons() const {
  std::vector<std::string> reasons;
  if (!configfs_readable) reasons.push_back("nvmet's configfs (subsystems) cannot be read");
  for (const NvmetNamespace& ns : namespaces) {
    if (ns.backend == NamespaceBackend::kNeedsBioQueue)
      reasons.push_back(ns.subsystem + " nsid " + ns.nsid + " (" + ns.device_path + "): " + ns.why);
  }
  return reasons;
}

}  // namespace ntprof::agent

namespace ntprof::agent {

std::string NvmetBackends::ToText() const {
  std::string out = "T2 by namespace (nvmet configfs, enabled namespaces):\n";
  if (!configfs_readable)
    return out + "  nvmet's configfs cannot be read: block_bio_queue is attached (nothing is known)\n";
  if (namespaces.empty()) out += "  none\n";
  for (const NvmetNamespace& ns : namespaces) {
    out += "  " + ns.subsystem + " nsid " + ns.nsid + " " + ns.device_path + ": " + ns.why + " -> ";
    switch (ns.backend) {
      case NamespaceBackend::kRequestBased:
        out += "from the request at block_rq_issue\n";
        break;
      case NamespaceBackend::kNeedsBioQueue:
        out += "block_bio_queue attached while it is enabled\n";
        break;
      case NamespaceBackend::kFile:
        out += "at nvmet_file_execute_rw\n";
        break;
    }
  }
  return out;
}

nlohmann::json NvmetBackends::ToJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const NvmetNamespace& ns : namespaces) {
    list.push_back({{"subsystem", ns.subsystem},
                    {"nsid", ns.nsid},
                    {"device_path", ns.device_path},
                    {"t2_from", T2Source(ns.backend)},
                    {"why", ns.why}});
  }
  return {{"configfs_readable", configfs_readable},
          {"block_bio_queue_needed", NeedsBioQueue()},
          {"namespaces", list}};
}

}  // namespace ntprof::agent
