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
  std::vector<std::string> hosts, targets;
  v1::RecordingSettings settings;  // sent as given: the collector checks and stores it
  uint32_t wait_s = 10;  // for the agents' answers: attaching the BPF programs takes a moment
};

// -s/--sample-rate (required when sample_required, else settings' rate is the default),
// --hosts, --targets, --subsystems, --devices, -d/--duration, --salt, --wait. The NAME positional
// is the verb's own.
void AddSessionStartFlags(CLI::App* cmd, SessionStartFlags* flags, bool sample_required);

// Starts the session and waits up to --wait for the agents' answers; *info is the session as
// last listed.
grpc::Status StartAndAwait(v1::Collector::StubInterface& stub, const SessionStartFlags& flags,
                           v1::SessionInfo* info);

// When an agent refused: says so on stderr ("ntprofctl VERB: 1 of 2 agent(s) refused ...") and
// returns true.
bool SayRefusals(const std::string& verb, const v1::SessionInfo& info);

}  // namespace ntprof::cli
