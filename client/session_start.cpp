#include "session_start.h"

#include <chrono>
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent_answers.h"
#include "collector_target.h"
#include "list_option.h"
#include "whole_number.h"

namespace ntprof::cli {

void AddSessionStartFlags(CLI::App* cmd, SessionStartFlags* flags, bool sample_required) {
  v1::RecordingSettings* settings = &flags->settings;
  // --sample-rate as in `ntprofd record`; --sample is kept for the scripts that use it.
  auto* sample = cmd->add_option_function<uint32_t>(
                        "-s,--sample-rate,--sample",
                        [settings](uint32_t n) { settings->set_sample_rate(n); },
                        "Sample one command in N")
                     ->check(WholeNumber<uint32_t>(1, 1u << 30));
  if (sample_required) {
    sample->required();
  } else {
    sample->default_str(std::to_string(settings->sample_rate()));
  }
  cmd->add_option("--hosts", flags->hosts, "Host agents (hostnames); default all")->delimiter(',');
  cmd->add_option("--targets", flags->targets, "Target agents (hostnames); default all")
      ->delimiter(',');
  AddListOption(cmd, "--subsystems", settings->mutable_subsystems(), "Only these subsystem NQNs");
  AddListOption(cmd, "--devices", settings->mutable_devices(), "Only these block devices");
  cmd->add_option_function<uint32_t>(
         "-d,--duration", [settings](uint32_t s) { settings->set_duration_s(s); },
         "Stop after SECONDS (default: at `stop`)")
      ->check(WholeNumber<uint32_t>());
  cmd->add_option_function<uint64_t>(
         "--salt", [settings](uint64_t salt) { settings->set_salt(salt); },
         "Sampling salt (default: the fleet's, which lets sessions share an agent)")
      ->check(WholeNumber<uint64_t>());
  cmd->add_option("--wait", flags->wait_s, "Wait SECONDS for every agent to answer (0: do not)")
      ->check(WholeNumber<uint32_t>(0, 3600))
      ->capture_default_str();
}

grpc::Status StartAndAwait(v1::Collector::StubInterface& stub, const SessionStartFlags& flags,
                           v1::SessionInfo* info) {
  v1::StartSessionRequest request;
  request.set_name(flags.name);
  *request.mutable_settings() = flags.settings;
  for (const auto& h : flags.hosts) request.add_hosts(h);
  for (const auto& t : flags.targets) request.add_targets(t);
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
