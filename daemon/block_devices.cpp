#include "block_devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ntprof::agent {

std::optional<uint32_t> ParseMajorMinor(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(absl::StripAsciiWhitespace(text), ':');
  uint32_t major = 0, minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor))
    return std::nullopt;
  return KernelDev(major, minor);
}

std::string BlockDeviceName(uint32_t kernel_dev, const std::string& sysfs_root) {
  std::string mm = std::to_string(KernelDevMajor(kernel_dev)) + ":" +
                   std::to_string(KernelDevMinor(kernel_dev));
  std::ifstream in(sysfs_root + "/dev/block/" + mm + "/uevent");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v(line);
    if (absl::ConsumePrefix(&v, "DEVNAME=")) return std::string(v);
  }
  return mm;
}

absl::StatusOr<uint32_t> ResolveBlockDevice(const std::string& name, const std::string& sysfs_root) {
  absl::string_view b(name);
  absl::ConsumePrefix(&b, "/dev/");
  std::string base(b);
  std::ifstream in(sysfs_root + "/class/block/" + base + "/dev");
  std::string text;
  if (in && std::getline(in, text)) {
    if (auto dev = ParseMajorMinor(text)) return *dev;
  }
  struct stat st;
  if (::stat(name.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
    return KernelDev(major(st.st_rdev), minor(st.st_rdev));
  return absl::NotFoundError("no block device " + name + " (not in " + sysfs_root +
                             "/class/block and not a block special file)");
}

}  // namespace ntprof::agent
