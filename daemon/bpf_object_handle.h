// One opened (not yet loaded) BPF object of the agent: host_tcp, target_tcp, host_rdma, target_rdma
// or local_block, behind
// one interface so the engine does not care which skeleton it drives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "session_options.h"

struct bpf_object;

namespace ntprof::agent {

class BpfObjectHandle {
 public:
  virtual ~BpfObjectHandle() = default;
  virtual struct bpf_object* object() = 0;
  // Read-only config of the session; only before load.
  virtual void SetConfig(uint32_t sample_rate, uint64_t salt) = 0;
  virtual const char* name() const = 0;
};

// Opens the object for (role, transport). btf_path: external kernel BTF for CO-RE ("" = running
// kernel's).
absl::StatusOr<std::unique_ptr<BpfObjectHandle>> OpenBpfObject(Role role, Transport transport,
                                                               const std::string& btf_path);

}  // namespace ntprof::agent
