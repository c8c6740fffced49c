// The `--spdk-target BINARY|PID` / `--spdk-host BINARY|PID` options of `ntprofd probe` and
// `ntprofd record`. The commands (daemon/cli/) add these options and hand over to the functions
// below when one is given; everything SPDK-specific stays here.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ntprof/v1/record.pb.h"

namespace ntprof::agent::spdk {

struct SpdkCliArgs {
  std::vector<std::string> targets;  // --spdk-target
  std::vector<std::string> hosts;    // --spdk-host
  bool placement = false;            // probe --placement: check the stamps' functions
  std::string spdk_version;          // probe --spdk-version (else read from the binary)
  bool given() const { return !targets.empty() || !hosts.empty(); }
};

// Adds --spdk-target and --spdk-host to a command.
void AddSpdkOptions(CLI::App* cmd, SpdkCliArgs* args);
// Adds `ntprofd probe`'s --placement and --spdk-version.
void AddSpdkPlacementOptions(CLI::App* cmd, SpdkCliArgs* args);
// Throws CLI::ValidationError for combinations that make no sense (both roles, --role, --device).
void ValidateSpdkOptions(const SpdkCliArgs& spdk, const std::string& role, const std::string& device);

// `ntprofd probe --spdk-...`: prints what the binaries and processes offer, or with --placement
// the placement check of each BINARY (spdk_placement_check.h). Returns an exit code.
int RunSpdkProbe(const SpdkCliArgs& spdk, bool json);

// The record settings shared with the kernel recording.
struct SpdkRecordRequest {
  v1::Transport transport = v1::TRANSPORT_TCP;  // header only: every record names its own
  uint32_t sample_rate = 0;
  uint64_t salt = 0;
  double duration = 0;
  double interval = 1;
  std::string output;
  std::string session;
  bool quiet = false;
  bool verbose = false;
};
// `ntprofd record --spdk-...`: records until stop (SIGINT/SIGTERM) or the duration; exit code.
int RunSpdkRecord(const SpdkCliArgs& spdk, const SpdkRecordRequest& request,
                  const std::atomic<bool>& stop);

}  // namespace ntprof::agent::spdk
