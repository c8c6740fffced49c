#include "record_command.h"

#include <signal.h>

#include <atomic>
#include <iostream>

#include "absl/strings/str_cat.h"

#include "exit_codes.h"
#include "interval_summary.h"
#include "kernel_facts.h"
#include "manual_page.h"
#include "recorder.h"
#include "spdk_cli.h"  // --spdk-target / --spdk-host (daemon/spdk/)
#include "transport_option.h"
#include "whole_number.h"

namespace ntprof::daemon_cli {
namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop.store(true); }

void InstallStopHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;  // no SA_RESTART: the ring buffer poll returns EINTR at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

struct RecordArgs {
  std::string role;
  std::string transport = "tcp";
  uint32_t sample_rate = 0;
  uint64_t salt = 0;
  double duration = 0;
  double interval = 1;
  std::string device;
  std::string output;
  std::string btf;
  std::string prefer;
  std::string session;
  bool quiet = false;
  bool verbose = false;
};

int RunRecord(const RecordArgs& a) {
  agent::RecordingOptions o;
  o.session.role = *agent::ParseRole(a.role);
  o.session.transport = *agent::ParseTransport(a.transport);
  o.session.sample_rate = a.sample_rate;
  o.session.salt = a.salt;
  o.session.device = a.device;
  o.session.btf_path = a.btf;
  o.session.prefer_attach = a.prefer;
  o.duration_s = a.duration;
  o.interval_s = a.interval;
  o.session_name = a.session;
  if (!a.quiet) o.on_note = [](const std::string& line) { std::cerr << "ntprofd: " << line << "\n"; };

  agent::LiveKernelFacts facts;
  agent::LogCallback log;
  if (a.verbose) log = [](const std::string& line) { std::cerr << line << "\n"; };
  InstallStopHandlers();
  auto recorder = agent::Recorder::Start(o, facts, log);
  if (!recorder.ok()) {
    std::cerr << "ntprofd record: " << recorder.status().message() << "\n";
    return cli::kFailed;
  }
  agent::Recorder& r = **recorder;
  auto sink = agent::NtpFileSink::Create(a.output, r.header());
  if (!sink.ok()) {
    std::cerr << "ntprofd record: cannot write " << a.output << ": " << sink.status().message()
              << "\n";
    return cli::kFailed;
  }
  if (!a.quiet) {
    std::cerr << "ntprofd: recording " << a.role << "/" << a.transport << ", "
              << (a.sample_rate ? absl::StrCat("1 command in ", a.sample_rate)
                                : std::string("no command sampled (hooks only)"))
              << ", salt " << a.salt << " -> " << a.output << "\n";
    for (const auto& h : r.plan().hooks()) {
      const auto* v = h.chosen_variant();
      if (!v) continue;
      std::cerr << "  " << h.hook.name << ": " << agent::AttachTypeName(v->type, h.hook.on_return);
      // why a preferred variant was passed over (a verifier's refusal shows only here)
      if (const auto& first = h.variants.front(); &first != v && !first.reason.empty())
        std::cerr << " (not " << agent::AttachTypeName(first.type, h.hook.on_return) << ": "
                  << first.reason << ")";
      std::cerr << "\n";
    }
    for (const std::string& m : r.plan().MissingOptional())
      std::cerr << "  missing optional hook " << m << ": its component is absent\n";
  }

  // One side recorded alone: the scope of every interval is known before its first record.
  IntervalSummary summary(a.sample_rate, o.session.role == agent::Role::kHost ? Scope::kHostOnly
                                                                              : Scope::kTargetOnly);
  uint64_t total = 0;
  auto on_interval = [&](const agent::BatchShare& batch, uint64_t interval_ns,
                         bool interval_end) {
    total += batch.size();
    if (a.quiet) return;
    google::protobuf::Arena arena;  // the batch decoded for the summary alone
    summary.AddBatch(batch.ToMessage(&arena));
    if (!interval_end) return;
    for (const std::string& line : IntervalSummary::Lines(summary.Take(interval_ns)))
      std::cout << line << "\n";
    std::cout.flush();
  };
  absl::Status st = r.Run(**sink, g_stop, on_interval);
  if (!st.ok()) {
    std::cerr << "ntprofd record: " << st.message() << "\n";
    return cli::kFailed;
  }
  if (!a.quiet)
    std::cerr << "ntprofd: " << r.stop_reason() << "; " << total << " records in " << a.output
              << "\n";
  return cli::kOk;
}

}  // namespace

void AddRecordCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RecordArgs>();
  auto spdk = std::make_shared<agent::spdk::SpdkCliArgs>();
  CLI::App* cmd = app.add_subcommand("record", "Record sampled NVMe-oF commands into a .ntp file");
  SetManualPage(cmd, WithTransportChoices(R"(NAME
    ntprofd record - record where the time of sampled NVMe-oF commands went, on one machine

SYNOPSIS
    ntprofd record --role host|target [--transport {transports}] -s N [--salt S]
                   [-d SECONDS] [-i SECONDS] [--device DEV] -o FILE.ntp

DESCRIPTION
    Attaches the role's BPF programs (see `ntprofd probe`), keeps one command in N - chosen from
    fields of the command both host and target see, so with the same N and salt both sides keep
    the same commands - and writes, for each, the stamps of its stages on this machine's clock.
    Every interval it appends a batch with the records, the completion counters of every
    command of the recorded devices (sampled or not) and the losses so far, and prints one line
    per group (operation, size, device). It stops on SIGINT/SIGTERM, after -d seconds, or when
    the recorded device disappears, and always finalizes the file.

    host   NVMe/TCP or NVMe/RDMA initiator (--transport): every namespace of that transport, or
           only --device nvmeXnY. Identity comes from /sys/class/nvme/nvmeN (subsystem NQN,
           cntlid), re-read on reconnect.
    target nvmet with TCP or RDMA ports: every subsystem; the backing device is recorded per
           command.
    local  (--transport local, host role) a local block device: block layer and drive only.

    Join host and target files with `ntprofctl report HOST.ntp TARGET.ntp`.)"));
  cmd->add_option("--role", args->role, "host or target (required unless --spdk-target/--spdk-host)")
      ->check(CLI::IsMember({"host", "target"}));
  AddTransportOption(cmd, &args->transport);
  cmd->add_option("-s,--sample-rate", args->sample_rate,
                  "Keep one command in N (1 = every command; 0 = none: every hook attached, nothing "
                  "sampled, to measure what the hooks alone cost)")
      ->required()
      ->check(cli::WholeNumber<uint32_t>(0, 1000000000));
  cmd->add_option("--salt", args->salt,
                  "Sampling salt: give host and target the same value (default 0)")
      ->check(cli::WholeNumber<uint64_t>())
      ->capture_default_str();
  cmd->add_option("-d,--duration", args->duration, "Stop after SECONDS (default: until SIGINT)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-i,--interval", args->interval, "Batch and summary interval in SECONDS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Host: only this namespace (nvme0n1 or /dev/nvme0n1); local: the block device (loop0), required");
  cmd->add_option("-o,--output", args->output, "The .ntp file to write (truncated)")->required();
  cmd->add_option("--session", args->session, "Session name stored in the file header");
  cmd->add_option("--btf", args->btf, "External BTF for modules built without BTF")
      ->check(CLI::ExistingFile);
  cmd->add_option("--prefer", args->prefer,
                  "Testing aid: try this attach type first where a hook offers it")
      ->check(CLI::IsMember({"tp_btf", "raw_tp", "fentry", "fexit", "kprobe", "kretprobe"}));
  cmd->add_flag("-q,--quiet", args->quiet, "No interval lines");
  cmd->add_flag("-v,--verbose", args->verbose, "Print libbpf's messages while loading");
  agent::spdk::AddSpdkOptions(cmd, spdk.get());
  cmd->footer(R"(
EXIT STATUS
    0  recorded and finalized the file
    1  could not start (a required hook, a missing device, the output file) or failed while
       recording; the message names what and what to do
    2  bad flags

EXAMPLES
    target# ntprofd record --role target -s 100 --salt 7 -d 60 -o target.ntp
    host#   ntprofd record --role host   -s 100 --salt 7 -d 60 -o host.ntp
    host#   ntprofd record --role host --transport rdma -s 100 --salt 7 -d 60 -o host.ntp
    host#   ntprofd record --role host --transport local --device nvme0n1 -s 10 -o local.ntp
    target# ntprofd record --spdk-target /usr/local/bin/nvmf_tgt -s 100 --salt 7 -o spdk.ntp
    host#   ntprofd record --spdk-host $(pidof spdk_nvme_perf) -s 100 --salt 7 -o perf.ntp)");
  cmd->callback([args, spdk, exit_code]() {
    // SPDK (user-space) targets and hosts: daemon/spdk/ records them; see docs/spdk.md.
    agent::spdk::ValidateSpdkOptions(*spdk, args->role, args->device);
    if (spdk->given()) {
      const v1::Transport transport = *agent::ParseTransport(args->transport);
      if (std::string problem = agent::CheckSpdkTransport(transport); !problem.empty())
        throw CLI::ValidationError(problem);
      InstallStopHandlers();
      *exit_code = agent::spdk::RunSpdkRecord(
          *spdk,
          {transport, args->sample_rate, args->salt, args->duration, args->interval,
           args->output, args->session, args->quiet, args->verbose},
          g_stop);
      return;
    }
    if (args->role.empty()) throw CLI::RequiredError("--role");
    CheckTransportFlags(args->role, args->transport, args->device, true);
    *exit_code = RunRecord(*args);
  });
}

}  // namespace ntprof::daemon_cli
