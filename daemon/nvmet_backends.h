// How the kernel target's namespaces reach their storage, read from configfs (nvmet's namespaces:
// device_path, enable) and sysfs (the backing disk's queue). It decides where the target's T2
// (handed to the backend) can be read:
//   - a blk-mq disk with I/O statistics on allocates a request for the command's bio and stamps it
//     (rq->start_time_ns, the monotonic clock), so block_rq_issue, which the drive issue already
//     hooks, reads T2 from it: no program on block_bio_queue, a tracepoint run on every bio of
//     every disk saved;
//   - a bio-based disk (device mapper, md, zram) has no request carrying nvmet's bio, and a blk-mq
//     disk with iostats off leaves start_time_ns 0: T2 needs block_bio_queue attached;
//   - a file namespace is stamped at nvmet_file_execute_rw.
// The recorder reads this at start, on device events, every rescan, and as soon as a target
// record arrives without T2 (recorder.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ntprof::agent {

enum class NamespaceBackend {
  kRequestBased,  // T2 from the request at block_rq_issue
  kNeedsBioQueue, // bio-based disk, iostats off, or a device we cannot classify
  kFile,          // T2 at nvmet_file_execute_rw
};

struct NvmetNamespace {
  std::string subsystem;    // NQN
  std::string nsid;
  std::string device_path;  // as configured
  NamespaceBackend backend = NamespaceBackend::kNeedsBioQueue;
  std::string why;          // "blk-mq, iostats on" / "bio-based (no mq in sysfs)" / ...
};

struct NvmetBackends {
  bool configfs_readable = false;  // /sys/kernel/config/nvmet/subsystems could be listed
  std::vector<NvmetNamespace> namespaces;  // the enabled ones

  // True when some enabled namespace needs block_bio_queue, or when configfs cannot be read (then
  // nothing is known, and a missing T2 costs more than the tracepoint run).
  bool NeedsBioQueue() const;
  // Why: "NQN nsid 3 (/dev/dm-0): bio-based (dm-0 has no mq/)" per namespace that needs it, or
  // that configfs cannot be read. Empty when T2 can come from the request everywhere.
  std::vector<std::string> BioQueueReasons() const;

  // For `ntprofd probe --role target`: where each enabled namespace's T2 comes from.
  std::string ToText() const;
  nlohmann::json ToJson() const;
};

NvmetBackends ReadNvmetBackends(const std::string& configfs_root = "/sys/kernel/config",
                                const std::string& sysfs_root = "/sys");

// How a block device (a path to a block special file) is classified, with the reason.
NamespaceBackend ClassifyBackingDevice(const std::string& device_path, const std::string& sysfs_root,
                                       std::string* why);

}  // namespace ntprof::agent
