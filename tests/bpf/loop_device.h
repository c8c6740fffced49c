// A loop device over a sparse file for tests that need real block-layer events (BPF programs on
// the block tracepoints). Needs root, a kernel with BTF and losetup; the test skips (exit 77)
// with the reason when the machine lacks one.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bpf_test_support.h"

namespace ntprof::testing {

[[noreturn]] inline void Skip(const std::string& why) {
  std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  std::exit(kSkipCode);
}

// A command's standard output, trailing newlines and spaces removed.
inline std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Attached on construction, detached and its file removed on destruction.
class LoopDevice {
 public:
  explicit LoopDevice(uint64_t bytes) {
    namespace fs = std::filesystem;
    SkipUnlessRoot("BPF programs and loop devices need root");
    if (!fs::exists("/sys/kernel/btf/vmlinux")) Skip("kernel has no BTF (/sys/kernel/btf/vmlinux)");
    file_ = fs::temp_directory_path() / ("ntprof-loop-" + std::to_string(::getpid()) + ".img");
    std::ofstream(file_).close();
    fs::resize_file(file_, bytes);
    path_ = Run("losetup --find --show " + file_.string() + " 2>/dev/null");
    if (path_.rfind("/dev/loop", 0) != 0) {
      fs::remove(file_);
      Skip("cannot attach a loop device (losetup --find --show failed)");
    }
    name_ = path_.substr(5);
    // rq->start_time_ns is only set when the block layer keeps I/O statistics.
    std::ofstream("/sys/block/" + name_ + "/queue/iostats") << "1";
  }
  ~LoopDevice() {
    Run("losetup -d " + path_);
    std::filesystem::remove(file_);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }  // /dev/loopN
  const std::string& name() const { return name_; }  // loopN

  // block_size bytes at each offset with O_DIRECT, so each is one block-layer request; false
  // when the device cannot be opened or a transfer comes up short.
  bool DirectIo(const std::vector<uint64_t>& offsets, uint32_t block_size, bool write) const {
    int fd = ::open(path_.c_str(), (write ? O_WRONLY : O_RDONLY) | O_DIRECT);
    if (fd < 0) return false;
    void* buf = nullptr;
    bool ok = posix_memalign(&buf, block_size, block_size) == 0;
    if (ok) std::memset(buf, 0xab, block_size);
    for (size_t i = 0; ok && i < offsets.size(); ++i) {
      ssize_t n = write ? ::pwrite(fd, buf, block_size, offsets[i])
                        : ::pread(fd, buf, block_size, offsets[i]);
      ok = n == static_cast<ssize_t>(block_size);
    }
    free(buf);
    ::close(fd);
    return ok;
  }

 private:
  std::filesystem::path file_;
  std::string path_, name_;
};

}  // namespace ntprof::testing
