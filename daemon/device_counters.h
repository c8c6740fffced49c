// Completed commands and bytes of the watched block devices, from the kernel's own block-layer
// accounting (/sys/block/DEV/stat) rather than from a BPF program on every completion: what the
// kernel counts anyway costs the I/O path nothing more (the overhead benchmark measured the
// per-completion counting at about a sixth of the host's BPF time per I/O).
//
// An NVMe namespace head with native multipath (nvme0n1) counts its commands on its path devices
// (nvme0c0n1, nvme0c1n1, ...; the head itself counts nothing on Linux 6.1), so a head is the sum
// of its paths.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ntprof::agent {

struct IoCounts {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
};

class DeviceCounters {
 public:
  explicit DeviceCounters(std::string sysfs_root = "/sys") : sysfs_root_(std::move(sysfs_root)) {}

  // The devices (kernel dev_t) to count from now on; one watched for the first time counts from
  // its current totals, so what it did before the recording is not in it. Which stat files make up
  // each device (a multipath head's paths) is looked up here, not at every Read: call it again
  // when devices change.
  void Watch(const std::vector<uint32_t>& kernel_devs);

  // What each watched device completed since the previous Read (the first: since the device was
  // first watched). A device whose statistics cannot be read (it vanished) is left out.
  std::map<uint32_t, IoCounts> Read();

 private:
  // The stat files whose sum is one device's totals (its own, or its multipath paths').
  std::vector<std::string> StatFiles(uint32_t kernel_dev) const;
  // The kernel's totals for one device since it appeared.
  std::optional<IoCounts> Totals(uint32_t kernel_dev) const;

  // A stat file held open from Watch on: a read at offset 0 makes sysfs generate it afresh, a
  // fifth of the cost of opening it every interval. A removed device's file then fails to read
  // (ENODEV), which leaves the device out.
  class OpenStatFile {
   public:
    explicit OpenStatFile(const std::string& path);
    ~OpenStatFile();
    OpenStatFile(OpenStatFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    OpenStatFile(const OpenStatFile&) = delete;
    OpenStatFile& operator=(const OpenStatFile&) = delete;
    OpenStatFile& operator=(OpenStatFile&&) = delete;
    // Adds the file's counts to *sum; false when it cannot be read.
    bool AddTo(IoCounts* sum) const;

   private:
    int fd_;
  };

  std::string sysfs_root_;
  std::set<uint32_t> watched_;
  std::map<uint32_t, std::vector<OpenStatFile>> stat_files_;  // of each watched device
  std::map<uint32_t, IoCounts> last_;  // the totals at the previous Read (or at Watch)
};

}  // namespace ntprof::agent
