// Starting a session, shared by `start` and `run`: the flags that select the agents and the
// sampling, the StartSession call and the wait for every agent's answer (it records, or refuses).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {

struct SessionStartFlags {
  std::string name;
  uint32_t sample_rate = 0;
  std::vector<std::string> hosts, targets, subsystems, devices;
  uint32_t duration_s = 0;
  uint64_t salt = 0;
  uint32_t wait_s = 10;  // for the agents' answers: attaching the BPF programs takes a moment
};

// -s/--sample (required when sample_required), --hosts, --targets, --subsystems, --devices,
// -d/--duration, --salt, --wait. The NAME positional is the verb's own.
void AddSessionStartFlags(CLI::App* cmd, SessionStartFlags* flags, bool sample_required);

// Starts the session and waits up to --wait for the agents' answers; *info is the session as
// last listed.
grpc::Status StartAndAwait(v1::Collector::StubInterface& stub, const SessionStartFlags& flags,
                           v1::SessionInfo* info);

// When an agent refused: says so on stderr ("ntprofctl VERB: 1 of 2 agent(s) refused ...") and
// returns true.
bool SayRefusals(const std::string& verb, const v1::SessionInfo& info);

}  // namespace ntprof::cli
