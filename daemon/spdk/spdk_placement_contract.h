// The placement contract: for each SPDK version the project ships a patch for, the function each
// ntprof stamp and done probe must land in (`ntprofd probe --placement`, spdk_placement_check.h).
// The table itself is in spdk_placement_contract.cpp, the one place a port adds its version.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "spdk_process_finder.h"  // SpdkRole

namespace ntprof::agent::spdk {

// One call site of the patch: a stamp (slot) or a done probe, in `function` of `file`.
struct PlacementRule {
  SpdkRole role;
  absl::string_view transport;  // "tcp" / "rdma"
  absl::string_view file;       // SPDK source file, for the messages: "lib/nvmf/rdma.c"
  absl::string_view label;      // "T5_REPLY_SENT", "nvmf_tcp_done"
  int slot;                    // stamp slot, or kDoneProbe
  absl::string_view function;   // where the patch puts the call
  // How many calls of this slot the patch puts in `function` (T2 twice: the fused partner's).
  int sites = 1;
  // Callers the compiler may inline `function` into (static functions, one or two callers):
  // the note then sits in the caller, and the check accepts it there, no more than `sites` times.
  std::vector<absl::string_view> inline_hosts = {};
  // The USDT probe name, for done probes ("nvmf_tcp_done").
  absl::string_view probe_name() const { return slot == kDoneProbe ? label : absl::string_view(); }
  static constexpr int kDoneProbe = -1;
};

struct PlacementContract {
  absl::string_view version;  // "v23.01.1"
  std::vector<PlacementRule> rules;
};

// The contract for an SPDK version ("v23.01.1", also "23.01.1"). Errors name the known versions.
const PlacementContract* FindPlacementContract(absl::string_view version);
// "v23.01.1, v25.09": for messages.
std::string KnownPlacementVersions();

}  // namespace ntprof::agent::spdk
