// Who this machine is, as recording headers and the collector see it.
#pragma once

#include <string>

namespace ntprof::agent {

std::string Hostname();
std::string BootId();         // /proc/sys/kernel/random/boot_id
std::string KernelRelease();  // uname -r

}  // namespace ntprof::agent
