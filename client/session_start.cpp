#include "session_start.h"

#include <chrono>
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent_answers.h"
#include "collector_target.h"
#include "whole_number.h"

namespace ntprof::cli {

void AddSessionStartFlags(CLI::App* cmd, SessionStartFlags* flags, bool sample_required) {
  auto* sample = cmd->add_option("-s,--sample", flags->sample_rate, "Sample one command in N")
                     ->check(WholeNumber<uint32_t>(1, 1u << 30));
  if (sample_required) {
    sample->required();
  } else {
    sample->capture_default_str();
  }
  cmd->add_option("--hosts", flags->hosts, "Host agents (hostnames); default all")->delimiter(',');
  cmd->add_option("--targets", flags->targets, "Target agents (hostnames); default all")
      ->delimiter(',');
  cmd->add_option("--subsystems", flags->subsystems, "Only these subsystem NQNs")->delimiter(',');
  cmd->add_option("--devices", flags->devices, "Only these block devices")->delimiter(',');
  cmd->add_option("-d,--duration", flags->duration_s, "Stop after SECONDS (default: at `stop`)")
      ->check(WholeNumber<uint32_t>());
  cmd->add_option("--salt", flags->salt, "Sampling salt (default: chosen by the collector)")
      ->check(WholeNumber<uint64_t>());
  cmd->add_option("--wait", flags->wait_s, "Wait SECONDS for every agent to answer (0: do not)")
      ->check(WholeNumber<uint32_t>(0, 3600))
      ->capture_default_str();
}

grpc::Status StartAndAwait(v1::Collector::StubInterface& stub, const SessionStartFlags& flags,
                           v1::SessionInfo* info) {
  v1::StartSessionRequest request;
  request.set_name(flags.name);
  request.set_sample_rate(flags.sample_rate);
  request.set_salt(flags.salt);
  request.set_duration_s(flags.duration_s);
  for (const auto& h : flags.hosts) request.add_hosts(h);
  for (const auto& t : flags.targets) request.add_targets(t);
  for (const auto& s : flags.subsystems) request.add_subsystems(s);
  for (const auto& d : flags.devices) request.add_devices(d);
  const grpc::Status status = stub.StartSession(UnaryContext().get(), request, info);
  if (!status.ok()) return status;
  *info = AwaitAgentAnswers(stub, *info, std::chrono::seconds(flags.wait_s));
  return status;
}

bool SayRefusals(const std::string& verb, const v1::SessionInfo& info) {
  const auto refusals = Refusals(info);
  if (refusals.empty()) return false;
  std::cerr << absl::StrFormat(
      "ntprofctl %s: %d of %d agent(s) refused session '%s' (%s): %s\n", verb, refusals.size(),
      info.agents_size(), info.name(),
      info.state() == v1::SESSION_STOPPED ? "so it is stopped" : "the others record it",
      absl::StrJoin(refusals, "; "));
  return true;
}

}  // namespace ntprof::cli
