// What /proc says about a process: its name, its start time (to tell a reused PID apart) and the
// files it maps.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "elf_probe_file.h"

namespace ntprof::agent::spdk {

struct MappedFile {
  uint64_t start = 0, end = 0, offset = 0;
  FileId id;
  std::string path;  // as the process sees it (its mount namespace)
};

struct ProcessInfo {
  pid_t pid = 0;
  std::string comm;
  uint64_t start_time = 0;  // field 22 of /proc/PID/stat: with the pid, names one process
  std::vector<MappedFile> maps;
};

// NotFound when the process does not exist (any more).
absl::StatusOr<ProcessInfo> ReadProcess(pid_t pid);
bool ProcessAlive(pid_t pid, uint64_t start_time);
std::vector<pid_t> ListPids();

// A path to a file the process maps that this agent can open: the process's own path when it names
// the same file here, otherwise the path through the process's root (/proc/PID/root/...).
std::string OpenablePath(pid_t pid, const MappedFile& m);

}  // namespace ntprof::agent::spdk
