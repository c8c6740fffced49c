// `ntprofd probe --spdk-target|--spdk-host`: what the named binaries and processes offer - the
// objects with `ntprof` USDT probes, their sites, the control block, and the running processes
// with their current sample rate. Nothing is attached or written.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spdk_process_finder.h"

namespace ntprof::agent::spdk {

// Fails with the same messages as a recording would (binary without probes, PID gone or not ours).
absl::StatusOr<std::string> DescribeSpdkProbes(SpdkRole role, const std::vector<std::string>& args);

}  // namespace ntprof::agent::spdk
