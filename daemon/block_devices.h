// Block device numbers as the kernel stores them (dev_t = MAJOR << 20 | MINOR, not glibc's
// makedev) and the names users know them by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace ntprof::agent {

inline uint32_t KernelDev(uint32_t major, uint32_t minor) { return (major << 20) | minor; }
inline uint32_t KernelDevMajor(uint32_t dev) { return dev >> 20; }
inline uint32_t KernelDevMinor(uint32_t dev) { return dev & 0xfffff; }

// "259:3" as in sysfs "dev" files.
std::optional<uint32_t> ParseMajorMinor(const std::string& text);

// The device name of a block device ("nvme0c0n1", "loop3", "nullb0") from
// /sys/dev/block/MAJ:MIN/uevent; "MAJ:MIN" if unknown.
std::string BlockDeviceName(uint32_t kernel_dev, const std::string& sysfs_root = "/sys");

// The kernel dev_t of a block device given as "loop0", "/dev/loop0" or "nvme0n1".
absl::StatusOr<uint32_t> ResolveBlockDevice(const std::string& name,
                                            const std::string& sysfs_root = "/sys");

}  // namespace ntprof::agent
