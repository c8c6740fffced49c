// Who this machine is, as headers and the collector see it. (recorder.cpp and
// spdk/spdk_recorder.cpp still carry private copies of the first two.)
#pragma once

#include <string>

namespace ntprof::agent {

std::string Hostname();
std::string BootId();         // /proc/sys/kernel/random/boot_id
std::string KernelRelease();  // uname -r

}  // namespace ntprof::agent
