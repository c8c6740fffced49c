#include "device_counters.h"

#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "block_devices.h"
#include "nvme_sysfs.h"

namespace ntprof::agent {
namespace {

constexpr uint64_t kSectorBytes = 512;  // the stat file counts 512-byte sectors on every device

// The stat files of a multipath head's paths: nvme<S>n<N> -> nvme<S>c<C>n<N>.
std::vector<std::string> PathStatFiles(const std::string& sysfs_root, const std::string& name) {
  std::vector<std::string> out;
  std::optional<NvmeDeviceName> head = ParseNvmeDeviceName(name);
  if (!head || !head->ns || head->path_controller) return out;  // a head: nvmeXnY
  const std::string pattern = sysfs_root + "/block/nvme" + std::to_string(head->instance) + "c*n" +
                              std::to_string(*head->ns) + "/stat";
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

IoCounts Minus(const IoCounts& a, const IoCounts& b) {
  // Totals only grow; a device replaced under the same number restarts at 0, so never wrap.
  auto d = [](uint64_t x, uint64_t y) { return x >= y ? x - y : x; };
  return {d(a.reads, b.reads), d(a.writes, b.writes), d(a.read_bytes, b.read_bytes),
          d(a.write_bytes, b.write_bytes)};
}

}  // namespace

DeviceCounters::OpenStatFile::OpenStatFile(const std::string& path)
    : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}

DeviceCounters::OpenStatFile::~OpenStatFile() {
  if (fd_ >= 0) ::close(fd_);
}

// reads completed [0], sectors read [2], writes completed [4], sectors written [6]
// (Documentation/block/stat.rst)
bool DeviceCounters::OpenStatFile::AddTo(IoCounts* sum) const {
  char text[512];
  const ssize_t n = fd_ < 0 ? -1 : ::pread(fd_, text, sizeof(text) - 1, 0);
  if (n <= 0) return false;
  text[n] = '\0';
  uint64_t f[7];
  const char* at = text;
  for (uint64_t& v : f) {
    char* end = nullptr;
    errno = 0;
    v = std::strtoull(at, &end, 10);
    if (end == at || errno != 0) return false;
    at = end;
  }
  sum->reads += f[0];
  sum->read_bytes += f[2] * kSectorBytes;
  sum->writes += f[4];
  sum->write_bytes += f[6] * kSectorBytes;
  return true;
}

std::vector<std::string> DeviceCounters::StatFiles(uint32_t kernel_dev) const {
  std::vector<std::string> paths =
      PathStatFiles(sysfs_root_, BlockDeviceName(kernel_dev, sysfs_root_));
  if (paths.empty())
    paths.push_back(sysfs_root_ + "/dev/block/" + std::to_string(KernelDevMajor(kernel_dev)) + ":" +
                    std::to_string(KernelDevMinor(kernel_dev)) + "/stat");
  return paths;
}

std::optional<IoCounts> DeviceCounters::Totals(uint32_t kernel_dev) const {
  auto files = stat_files_.find(kernel_dev);
  if (files == stat_files_.end()) return std::nullopt;
  IoCounts sum;
  bool any = false;
  for (const OpenStatFile& f : files->second) any |= f.AddTo(&sum);
  if (any) return sum;
  return std::nullopt;
}

void DeviceCounters::Watch(const std::vector<uint32_t>& kernel_devs) {
  watched_ = std::set<uint32_t>(kernel_devs.begin(), kernel_devs.end());
  stat_files_.clear();
  for (uint32_t dev : watched_) {
    std::vector<OpenStatFile>& files = stat_files_[dev];
    for (const std::string& path : StatFiles(dev)) files.emplace_back(path);
    if (last_.count(dev)) continue;
    if (auto now = Totals(dev)) last_[dev] = *now;
  }
}

std::map<uint32_t, IoCounts> DeviceCounters::Read() {
  std::map<uint32_t, IoCounts> out;
  for (uint32_t dev : watched_) {
    auto last = last_.find(dev);
    auto now = Totals(dev);
    if (last == last_.end() || !now) continue;
    out[dev] = Minus(*now, last->second);
    last->second = *now;
  }
  return out;
}

}  // namespace ntprof::agent
