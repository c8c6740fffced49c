#include "probe_command.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "collector_target.h"
#include "exit_codes.h"
#include "ntprof/v1/agent.grpc.pb.h"

namespace ntprof::cli {
namespace {

struct ProbeArgs {
  std::string agent = "unix:///run/ntprofd/ntprofd.sock";
  CollectorFlags tls;
};

int RunProbe(const ProbeArgs& args) {
  CollectorTarget target{args.agent, "the AGENT argument", nullptr};
  std::string error;
  if (!OpenChannel(args.agent, args.tls, &target.channel, &error)) {
    std::cerr << "ntprofctl probe: " << error << "\n";
    return kBadInput;
  }
  auto stub = v1::Agent::NewStub(target.channel);
  v1::ProbeReply reply;
  const grpc::Status status = stub->Probe(UnaryContext().get(), v1::ProbeRequest{}, &reply);
  if (!status.ok()) {
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      std::cerr << "ntprofctl probe: cannot reach the agent at " << args.agent << ": "
                << status.error_message() << "; is ntprofd running there (systemctl status "
                << "ntprofd)?\n";
      return kFailed;
    }
    return RpcFailure("probe", target, status);
  }
  std::cout << absl::StrFormat("%s: kernel %s, ntprofd %s\n", reply.hostname(),
                               reply.kernel_release(), reply.agent_version());
  for (const auto& h : reply.hooks()) {
    std::cout << absl::StrFormat(
        "  %-40s %-9s %-10s %s\n", h.hook(), h.required() ? "required" : "optional",
        h.available() ? h.attach() : "missing", h.available() ? h.component() : h.reason());
  }
  return kOk;
}

}  // namespace

void AddProbeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* cmd = app.add_subcommand("probe", "Which hooks an agent's kernel offers");
  cmd->footer(R"HELP(
Asks ntprofd (AGENT: its unix socket, default unix:///run/ntprofd/ntprofd.sock, or HOST:PORT of its
TLS listener) which hooks it can attach on this kernel, the attach type chosen for each (tracepoint,
fentry, kprobe, usdt), and why a missing one is missing.

Examples:
  ntprofctl probe
  ntprofctl probe target1:7421 --tls-ca ca.pem)HELP");
  cmd->add_option("agent", args->agent, "Agent address")->default_str(args->agent);
  AddTlsFlags(cmd, &args->tls);
  cmd->callback([args, exit_code] { *exit_code = RunProbe(*args); });
}

}  // namespace ntprof::cli
