// The sample rate and salt of one process, written into its ntprof_probe_control blocks (one per
// mapped object that carries one) through /proc/PID/mem. Salt first, rate last: a command that
// sees the new rate already sees the new salt.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ntprof_probe_abi.h"
#include "process_maps.h"

namespace ntprof::agent::spdk {

struct ControlBlock {
  uint64_t address = 0;  // in the process
  std::string object;    // the file it belongs to (for messages)
};

// Where each object's control block is in this process. An object whose block cannot be located
// (symbol stripped, not mapped yet) is reported in *problems.
std::vector<ControlBlock> LocateControlBlocks(const ProcessInfo& process,
                                              const std::vector<const ElfProbeFile*>& objects,
                                              std::vector<std::string>* problems);

// Reads a block and checks its magic and version (a block of another contract revision is refused
// with a message naming both).
absl::StatusOr<ntprof_probe_control> ReadControl(pid_t pid, const ControlBlock& block);
// Writes salt, then sample_rate (0 switches sampling off).
absl::Status WriteSampling(pid_t pid, const ControlBlock& block, uint32_t sample_rate, uint64_t salt);

}  // namespace ntprof::agent::spdk
