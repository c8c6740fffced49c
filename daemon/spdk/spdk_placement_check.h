// `ntprofd probe --placement --spdk-target|--spdk-host BINARY`: lists every ntprof stamp site and
// done probe of an SPDK binary (and the libraries it needs) with the function that holds it - the
// USDT notes (.note.stapsdt) give the address, the ELF symbol table the function - and compares
// them with the placement contract of the binary's SPDK version (spdk_placement_contract.h). A
// patch hunk that applied in the wrong function (fuzz), did not apply, or applied twice is named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spdk_process_finder.h"

namespace ntprof::agent::spdk {

struct PlacementSite {
  std::string object;    // the ELF file holding it
  uint64_t address = 0;  // in that file
  std::string label;     // "T5_REPLY_SENT", "nvmf_tcp_done", "slot 13"
  std::string function;  // the function holding it ("?" when no symbol covers it)
  std::string expected;  // the contract's function; empty when no rule takes it
  std::string verdict;   // "in place", "inlined into a caller", "MISPLACED", "DOUBLED"
};

struct PlacementReport {
  SpdkRole role = SpdkRole::kTarget;
  std::string version;         // "v23.01.1"
  std::string version_source;  // "--spdk-version" or the file the version string was found in
  std::vector<std::string> objects;
  std::vector<PlacementSite> sites;
  std::vector<std::string> problems;  // one line each: probe, function found, expected, what to do
  bool ok() const { return problems.empty(); }
  std::string ToText() const;
  std::string ToJson() const;
};

// `version` empty: read "SPDK vX.Y[.Z]" from the binary or the libspdk_* libraries it needs.
// Fails (a message saying what to do) when the binary is unreadable, holds no ntprof notes, is
// stripped, or its version has no contract; placement problems are in the report instead.
absl::StatusOr<PlacementReport> CheckPlacement(SpdkRole role, const std::string& binary,
                                               const std::string& version);

}  // namespace ntprof::agent::spdk
