#include "unix_socket_path.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace ntprof::agent {
namespace {

// -1 when the group does not exist.
gid_t GroupId(const std::string& group) {
  if (group.empty()) return static_cast<gid_t>(-1);
  struct group* g = getgrnam(group.c_str());
  return g ? g->gr_gid : static_cast<gid_t>(-1);
}

// Whether something accepts connections on the socket.
bool Answers(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool live = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return live;
}

absl::Status Errno(const std::string& what) {
  return absl::FailedPreconditionError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status PrepareSocketPath(const std::string& path, const std::string& group) {
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path ", path, " is too long for a unix socket; pick a shorter one"));
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  const bool created = std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir.string(), ": ", ec.message(),
                     "; run as root or pass --socket in a directory you own"));
  }
  const gid_t gid = GroupId(group);
  if (created || dir == "/run/ntprofd") {
    // Only the agent's own directory is tightened; a directory the operator chose is theirs.
    if (gid != static_cast<gid_t>(-1) && chown(dir.c_str(), static_cast<uid_t>(-1), gid) != 0)
      return Errno(absl::StrCat("cannot give ", dir.string(), " to group ", group));
    if (chmod(dir.c_str(), gid != static_cast<gid_t>(-1) ? 0750 : 0755) != 0)
      return Errno(absl::StrCat("cannot chmod ", dir.string()));
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " exists and is not a socket; remove it or pass another --socket"));
    }
    if (Answers(path)) {
      return absl::FailedPreconditionError(
          absl::StrCat("another ntprofd already serves on ", path,
                       "; stop it first (systemctl stop ntprofd) or pass another --socket"));
    }
    if (unlink(path.c_str()) != 0)  // left by an agent that was killed
      return Errno(absl::StrCat("cannot remove the stale socket ", path));
  }
  return absl::OkStatus();
}

absl::Status SecureSocket(const std::string& path, const std::string& group) {
  const gid_t gid = GroupId(group);
  if (gid != static_cast<gid_t>(-1) && chown(path.c_str(), static_cast<uid_t>(-1), gid) != 0)
    return Errno(absl::StrCat("cannot give ", path, " to group ", group));
  if (chmod(path.c_str(), 0660) != 0) return Errno(absl::StrCat("cannot chmod ", path));
  return absl::OkStatus();
}

}  // namespace ntprof::agent
