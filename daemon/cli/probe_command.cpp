#include "probe_command.h"

#include <unistd.h>

#include <iostream>

#include "agent_engine.h"
#include "exit_codes.h"
#include "hook_plan.h"
#include "kernel_facts.h"
#include "manual_page.h"
#include "nvmet_backends.h"
#include "spdk_cli.h"  // --spdk-target / --spdk-host (daemon/spdk/)
#include "transport_option.h"
#include "transports.h"

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
  // a kernel target's T2 depends on its namespaces' disks (daemon/nvmet_backends.h)
  const agent::TransportRow* row = agent::FindTransport(s.transport);
  const bool kernel_target = s.role == agent::Role::kTarget && row && !row->local_device;
  if (a.json) {
    nlohmann::json out = nlohmann::json::parse(plan.ToJson());
    if (kernel_target) out["t2"] = agent::ReadNvmetBackends().ToJson();
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << plan.ToText();
    if (kernel_target) std::cout << agent::ReadNvmetBackends().ToText();
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
    ntprofd probe --spdk-target|--spdk-host BINARY|PID ...
    ntprofd probe --spdk-target|--spdk-host BINARY --placement [--spdk-version VERSION] [--json]

DESCRIPTION
    For every kernel event the role needs, prints the attach type chosen on this kernel
    (tp_btf, raw_tp, fentry/fexit, kprobe/kretprobe), whether the hook is required or optional,
    what it stamps, and for each candidate that cannot be used, why (module not loaded, function
    inlined or renamed, fentry refused by the kernel, no kprobes, no BTF ...).

    The plan is decided from the kernel's facts (BTF, kallsyms, tracefs) and then, when run as
    root, confirmed by loading and attaching the programs once (nothing is recorded). A required
    hook without a usable variant means `ntprofd record` would stop with the same message.

    For a target, it then lists each enabled nvmet namespace (configfs) and where its T2 (handed
    to the backend) comes from: the block request's start time at block_rq_issue on a blk-mq disk
    with iostats on; block_bio_queue, attached on demand, on a bio-based disk (device mapper, md)
    or with iostats off; nvmet_file_execute_rw for a file. With --json: the "t2" object.

    With --spdk-target or --spdk-host (an SPDK application built with the ntprof probe patch,
    docs/spdk.md): the objects holding its `ntprof` USDT probes, their sites and control block, and
    the processes running it with their current sample rate. Nothing is attached or written.

    With --placement as well: the placement check a porter runs after `patch -p1 -F0`. It lists
    every ntprof stamp site and done probe of BINARY and of the libraries it needs (the USDT notes
    `ntprof_stamp:stamp` and `ntprof:*_done`) with the function that holds it (from the ELF
    symbol table), and compares each with the contract of the binary's SPDK version
    (daemon/spdk/spdk_placement_contract.cpp): the function the patch puts it in, or a caller the
    compiler may inline that function into. One line per problem on stderr:
      MISPLACED   a stamp in a function the contract does not name (a hunk applied with fuzz
                  in a look-alike function, e.g. request_transfer_in for request_transfer_out)
      MISSING     no site where the contract expects one (a hunk rejected or dropped)
      DOUBLED     more sites in a function than the contract allows (a hunk applied twice)
    The version comes from --spdk-version, else from the "SPDK vX.Y" string SPDK compiles into
    libspdk_nvmf.so and libspdk_env_dpdk.so. The binary must keep its symbol table (.symtab):
    SPDK's own build does.)"));
  cmd->add_option("--role", args->role,
                  "host (NVMe-oF initiator) or target (nvmet); required unless --spdk-target/--spdk-host")
      ->check(CLI::IsMember({"host", "target"}));
  AddTransportOption(cmd, &args->transport);
  cmd->add_flag("--json", args->json, "Print the plan (with --placement: the check) as JSON");
  cmd->add_flag("--no-load", args->no_load,
                "Decide from kernel facts only; do not load or attach anything");
  cmd->add_option("--btf", args->btf,
                  "External BTF (e.g. from BTFHub) holding the types of modules built without BTF")
      ->check(CLI::ExistingFile);
  cmd->add_option("--prefer", args->prefer,
                  "Testing aid: try this attach type first where a hook offers it")
      ->check(CLI::IsMember({"tp_btf", "raw_tp", "fentry", "fexit", "kprobe", "kretprobe"}));
  agent::spdk::AddSpdkOptions(cmd, spdk.get());
  agent::spdk::AddSpdkPlacementOptions(cmd, spdk.get());
  cmd->footer(R"(
EXIT STATUS
    0  every required hook can attach (and did, in the trial load); with --placement: every
       stamp and probe is where the contract puts it
    1  a required hook cannot attach, or the trial load failed (the message says which and why);
       with --placement: a stamp misplaced, missing or doubled (one line each on stderr), or the
       binary unreadable, without ntprof notes, stripped, or of an SPDK version without contract
    2  bad flags

EXAMPLES
    ntprofd probe --role host
    ntprofd probe --role target --json | jq '.hooks[] | {hook, chosen}'
    ntprofd probe --role target --transport rdma
    ntprofd probe --role host --transport local --no-load
    ntprofd probe --spdk-target /usr/local/bin/nvmf_tgt
    ntprofd probe --spdk-target build/bin/nvmf_tgt --placement
    ntprofd probe --spdk-host build/lib/libspdk_nvme.so --placement --spdk-version v23.01.1
    ntprofd probe --spdk-target build/bin/nvmf_tgt --placement --json | jq '.problems[]')");
  cmd->callback([args, spdk, exit_code]() {
    // SPDK (user-space) targets and hosts: their USDT probe sites and processes (daemon/spdk/).
    agent::spdk::ValidateSpdkOptions(*spdk, args->role, "");
    if (spdk->given()) {
      *exit_code = agent::spdk::RunSpdkProbe(*spdk, args->json);
      return;
    }
    if (args->role.empty()) throw CLI::RequiredError("--role");
    CheckTransportFlags(args->role, args->transport, "", false);
    *exit_code = RunProbe(*args);
  });
}

}  // namespace ntprof::daemon_cli
