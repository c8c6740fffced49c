#include "probe_command.h"

#include <unistd.h>

#include <iostream>

#include "agent_engine.h"
#include "exit_codes.h"
#include "hook_plan.h"
#include "kernel_facts.h"
#include "manual_page.h"
#include "spdk_cli.h"  // --spdk-target / --spdk-host (daemon/spdk/)
#include "transport_option.h"

namespace ntprof::daemon_cli {
namespace {

struct ProbeArgs {
  std::string role;
  std::string transport = "tcp";
  bool json = false;
  bool no_load = false;
  std::string btf;
  std::string prefer;
};

int RunProbe(const ProbeArgs& a) {
  agent::SessionOptions s;
  s.role = *agent::ParseRole(a.role);
  s.transport = *agent::ParseTransport(a.transport);
  s.btf_path = a.btf;
  s.prefer_attach = a.prefer;
  agent::LiveKernelFacts facts;
  agent::PlanInputs inputs{.external_btf = !a.btf.empty(), .prefer_attach = a.prefer};
  agent::HookPlan plan = agent::PlanHooks(s.role, s.transport, facts, inputs);
  std::string load_error;
  // A trial load and attach (nothing is sampled: no device is watched) turns "should work" into
  // "works": the kernel may still refuse a program the facts allowed.
  if (!a.no_load && plan.CheckRequired().ok()) {
    if (geteuid() != 0) {
      load_error = "not root: the plan above is from kernel facts only (no trial load)";
    } else {
      auto engine = agent::AgentEngine::Start(s, facts);
      if (engine.ok()) {
        plan = (*engine)->plan();
      } else {
        load_error = std::string(engine.status().message());
      }
    }
  }
  if (a.json) {
    std::cout << plan.ToJson();
  } else {
    std::cout << plan.ToText();
  }
  if (!load_error.empty()) std::cerr << "ntprofd probe: " << load_error << "\n";
  return plan.CheckRequired().ok() && load_error.empty() ? cli::kOk : cli::kFailed;
}

}  // namespace

void AddProbeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProbeArgs>();
  auto spdk = std::make_shared<agent::spdk::SpdkCliArgs>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Show which hooks this kernel offers and how each one would attach");
  SetManualPage(cmd, WithTransportChoices(R"(NAME
    ntprofd probe - which hooks this kernel offers, and how each attaches

SYNOPSIS
    ntprofd probe --role host|target [--transport {transports}] [--json] [--no-load]
                  [--btf FILE] [--prefer TYPE]

DESCRIPTION
    For every kernel event the role needs, prints the attach type chosen on this kernel
    (tp_btf, raw_tp, fentry/fexit, kprobe/kretprobe), whether the hook is required or optional,
    what it stamps, and for each candidate that cannot be used, why (module not loaded, function
    inlined or renamed, fentry refused by the kernel, no kprobes, no BTF ...).

    The plan is decided from the kernel's facts (BTF, kallsyms, tracefs) and then, when run as
    root, confirmed by loading and attaching the programs once (nothing is recorded). A required
    hook without a usable variant means `ntprofd record` would stop with the same message.)"));
  cmd->add_option("--role", args->role,
                  "host (NVMe-oF initiator) or target (nvmet); required unless --spdk-target/--spdk-host")
      ->check(CLI::IsMember({"host", "target"}));
  AddTransportOption(cmd, &args->transport);
  cmd->add_flag("--json", args->json, "Print the plan as JSON");
  cmd->add_flag("--no-load", args->no_load,
                "Decide from kernel facts only; do not load or attach anything");
  cmd->add_option("--btf", args->btf,
                  "External BTF (e.g. from BTFHub) holding the types of modules built without BTF")
      ->check(CLI::ExistingFile);
  cmd->add_option("--prefer", args->prefer,
                  "Testing aid: try this attach type first where a hook offers it")
      ->check(CLI::IsMember({"tp_btf", "raw_tp", "fentry", "fexit", "kprobe", "kretprobe"}));
  agent::spdk::AddSpdkOptions(cmd, spdk.get());
  cmd->footer(R"(
EXIT STATUS
    0  every required hook can attach (and did, in the trial load)
    1  a required hook cannot attach, or the trial load failed (the message says which and why)
    2  bad flags

EXAMPLES
    ntprofd probe --role host
    ntprofd probe --role target --json | jq '.hooks[] | {hook, chosen}'
    ntprofd probe --role target --transport rdma
    ntprofd probe --role host --transport local --no-load
    ntprofd probe --spdk-target /usr/local/bin/nvmf_tgt)");
  cmd->callback([args, spdk, exit_code]() {
    // SPDK (user-space) targets and hosts: their USDT probe sites and processes (daemon/spdk/).
    agent::spdk::ValidateSpdkOptions(*spdk, args->role, "");
    if (spdk->given()) {
      *exit_code = agent::spdk::RunSpdkProbe(*spdk);
      return;
    }
    if (args->role.empty()) throw CLI::RequiredError("--role");
    CheckTransportFlags(args->role, args->transport, "", false);
    *exit_code = RunProbe(*args);
  });
}

}  // namespace ntprof::daemon_cli
