#include "host_identity.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace ntprof::agent {

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string line;
  std::getline(in, line);
  return line;
}

std::string KernelRelease() {
  struct utsname u;
  uname(&u);
  return u.release;
}

}  // namespace ntprof::agent
