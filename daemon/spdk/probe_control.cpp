#include "probe_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ntprof::agent::spdk {
namespace {

// Closes the descriptor of /proc/PID/mem on every path.
class ProcessMemory {
 public:
  ProcessMemory(pid_t pid, int flags) : fd_(open(absl::StrCat("/proc/", pid, "/mem").c_str(), flags)) {}
  ~ProcessMemory() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  bool Read(uint64_t addr, void* buf, size_t len) {
    return pread(fd_, buf, len, static_cast<off_t>(addr)) == static_cast<ssize_t>(len);
  }
  bool Write(uint64_t addr, const void* buf, size_t len) {
    return pwrite(fd_, buf, len, static_cast<off_t>(addr)) == static_cast<ssize_t>(len);
  }

 private:
  int fd_;
};

absl::Status MemoryError(pid_t pid, const char* what) {
  const int e = errno;
  std::string hint = e == EACCES || e == EPERM
                         ? ": run ntprofd as root (it needs ptrace access to the process)"
                     : e == ENOENT || e == ESRCH ? ": the process exited"
                                                 : "";
  return absl::PermissionDeniedError(
      absl::StrCat("cannot ", what, " /proc/", pid, "/mem: ", strerror(e), hint));
}

}  // namespace

std::vector<ControlBlock> LocateControlBlocks(const ProcessInfo& process,
                                              const std::vector<const ElfProbeFile*>& objects,
                                              std::vector<std::string>* problems) {
  std::vector<ControlBlock> blocks;
  for (const ElfProbeFile* obj : objects) {
    if (!obj->control_address()) {
      problems->push_back(absl::StrCat(obj->path(), " has ntprof probes but no symbol ",
                                       NTPROF_PROBE_CONTROL_SYMBOL,
                                       " (stripped? keep it exported: docs/spdk.md)"));
      continue;
    }
    auto file_offset = obj->FileOffsetOf(*obj->control_address());
    if (!file_offset) {
      problems->push_back(absl::StrCat(obj->path(), ": ", NTPROF_PROBE_CONTROL_SYMBOL,
                                       " is not in a file-backed segment"));
      continue;
    }
    bool found = false;
    for (const MappedFile& m : process.maps) {
      if (m.id != obj->id()) continue;
      if (*file_offset < m.offset || *file_offset >= m.offset + (m.end - m.start)) continue;
      blocks.push_back({m.start + (*file_offset - m.offset), obj->path()});
      found = true;
      break;
    }
    if (!found)
      problems->push_back(absl::StrCat(obj->path(), " is not (yet) mapped by process ", process.pid));
  }
  return blocks;
}

absl::StatusOr<ntprof_probe_control> ReadControl(pid_t pid, const ControlBlock& block) {
  ProcessMemory mem(pid, O_RDONLY | O_CLOEXEC);
  ntprof_probe_control c{};
  if (!mem.ok() || !mem.Read(block.address, &c, sizeof(c))) return MemoryError(pid, "read");
  if (c.magic != NTPROF_PROBE_MAGIC) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "process %d, %s: the probe control block has magic 0x%08x, expected 0x%08x (an "
        "incompatible ntprof probe contract; rebuild the application with this ntprof's "
        "ntprof_probe.h)",
        pid, block.object, c.magic, NTPROF_PROBE_MAGIC));
  }
  if (c.version < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("process ", pid, ", ", block.object, ": probe contract version ", c.version,
                     " is not supported (this agent reads 1 to ", NTPROF_PROBE_VERSION, " and later)"));
  }
  return c;
}

absl::Status WriteSampling(pid_t pid, const ControlBlock& block, uint32_t sample_rate,
                           uint64_t salt) {
  ProcessMemory mem(pid, O_RDWR | O_CLOEXEC);
  if (!mem.ok()) return MemoryError(pid, "open");
  if (sample_rate != 0 &&
      !mem.Write(block.address + offsetof(ntprof_probe_control, salt), &salt, sizeof(salt)))
    return MemoryError(pid, "write");
  if (!mem.Write(block.address + offsetof(ntprof_probe_control, sample_rate), &sample_rate,
                 sizeof(sample_rate)))
    return MemoryError(pid, "write");
  return absl::OkStatus();
}

}  // namespace ntprof::agent::spdk
