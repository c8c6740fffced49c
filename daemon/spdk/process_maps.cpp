#include "process_maps.h"

#include <dirent.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ntprof::agent::spdk {
namespace {

std::string ProcPath(pid_t pid, const char* what) { return absl::StrCat("/proc/", pid, "/", what); }

// Start time of the process; nullopt when it does not exist or is a zombie (exited, not reaped).
// (PID 1 may legitimately have start time 0.)
std::optional<uint64_t> StartTime(pid_t pid, std::string* comm) {
  std::ifstream in(ProcPath(pid, "stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // comm is in parentheses and may contain spaces: fields resume after the last ')'.
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  if (comm) *comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return std::nullopt;
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<ProcessInfo> ReadProcess(pid_t pid) {
  ProcessInfo p;
  p.pid = pid;
  const std::optional<uint64_t> start = StartTime(pid, &p.comm);
  p.start_time = start.value_or(0);
  if (!start)
    return absl::NotFoundError(absl::StrCat("no process ", pid, " (it exited, or never existed)"));
  std::ifstream maps(ProcPath(pid, "maps"));
  if (!maps) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read /proc/", pid, "/maps of process ",
                                                    pid, " (", p.comm, "): ", strerror(errno),
                                                    " (ntprofd needs root, with ptrace access to the process)"));
  }
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset major:minor inode path
    std::istringstream in(line);
    std::string range, perms, offset, dev, path;
    unsigned long inode = 0;
    if (!(in >> range >> perms >> offset >> dev >> inode) || inode == 0) continue;
    std::getline(in, path);
    path.erase(0, path.find_first_not_of(' '));
    if (path.empty() || path[0] != '/') continue;
    MappedFile m;
    m.start = std::strtoull(range.c_str(), nullptr, 16);
    m.end = std::strtoull(range.c_str() + range.find('-') + 1, nullptr, 16);
    m.offset = std::strtoull(offset.c_str(), nullptr, 16);
    const unsigned major = std::strtoul(dev.c_str(), nullptr, 16);
    const unsigned minor = std::strtoul(dev.c_str() + dev.find(':') + 1, nullptr, 16);
    m.id = FileId{makedev(major, minor), static_cast<ino_t>(inode)};
    m.path = path;
    p.maps.push_back(std::move(m));
  }
  if (p.maps.empty() && !ProcessAlive(pid, p.start_time))
    return absl::NotFoundError(absl::StrCat("no process ", pid, " (it exited)"));
  return p;
}

bool ProcessAlive(pid_t pid, uint64_t start_time) {
  const std::optional<uint64_t> now = StartTime(pid, nullptr);
  return now && *now == start_time;
}

std::vector<pid_t> ListPids() {
  std::vector<pid_t> pids;
  DIR* d = opendir("/proc");
  if (!d) return pids;
  while (struct dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end && *end == '\0' && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return pids;
}

std::string OpenablePath(pid_t pid, const MappedFile& m) {
  auto here = FileIdOf(m.path);
  if (here.ok() && *here == m.id) return m.path;
  return absl::StrCat("/proc/", pid, "/root", m.path);
}

}  // namespace ntprof::agent::spdk
