#include "spdk_cli.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "exit_codes.h"
#include "interval_summary.h"
#include "spdk_placement_check.h"
#include "spdk_probe_report.h"
#include "spdk_recorder.h"

namespace ntprof::agent::spdk {
namespace {

SpdkRole RoleOf(const SpdkCliArgs& a) { return a.targets.empty() ? SpdkRole::kHost : SpdkRole::kTarget; }
const std::vector<std::string>& ArgsOf(const SpdkCliArgs& a) {
  return a.targets.empty() ? a.hosts : a.targets;
}

}  // namespace

void AddSpdkOptions(CLI::App* cmd, SpdkCliArgs* args) {
  cmd->add_option("--spdk-target", args->targets,
                  "SPDK target (nvmf_tgt) built with the ntprof probe contract: a BINARY (every "
                  "process running it, also those started later) or a PID; repeatable")
      ->type_name("BINARY|PID");
  cmd->add_option("--spdk-host", args->hosts,
                  "SPDK host (spdk_nvme_perf, an SPDK application) built with the ntprof probe "
                  "contract: a BINARY or a PID; repeatable")
      ->type_name("BINARY|PID");
}

void AddSpdkPlacementOptions(CLI::App* cmd, SpdkCliArgs* args) {
  cmd->add_flag("--placement", args->placement,
                "With --spdk-target/--spdk-host BINARY: check that every ntprof stamp and probe "
                "sits in the function the patch's contract names (after porting the patch)");
  cmd->add_option("--spdk-version", args->spdk_version,
                  "With --placement: the SPDK version whose contract applies (e.g. v23.01.1); "
                  "default: the \"SPDK vX.Y\" string in the binary or its libspdk_* libraries")
      ->type_name("VERSION");
}

void ValidateSpdkOptions(const SpdkCliArgs& spdk, const std::string& role, const std::string& device) {
  if (!spdk.given()) {
    if (spdk.placement) throw CLI::ValidationError("--placement", "needs --spdk-target or --spdk-host BINARY");
    if (!spdk.spdk_version.empty()) throw CLI::ValidationError("--spdk-version", "applies to --placement only");
    return;
  }
  if (!spdk.spdk_version.empty() && !spdk.placement)
    throw CLI::ValidationError("--spdk-version", "applies to --placement only");
  if (!spdk.targets.empty() && !spdk.hosts.empty())
    throw CLI::ValidationError("--spdk-target/--spdk-host",
                               "record one role per run (and per .ntp file): give one of them");
  if (!role.empty())
    throw CLI::ValidationError("--role", "is implied by --spdk-target / --spdk-host; drop it");
  if (!device.empty())
    throw CLI::ValidationError("--device", "applies to kernel recordings only");
}

namespace {

int RunPlacementCheck(const SpdkCliArgs& spdk, bool json) {
  int code = cli::kOk;
  for (const std::string& binary : ArgsOf(spdk)) {
    if (!binary.empty() && std::all_of(binary.begin(), binary.end(), ::isdigit) && access(binary.c_str(), F_OK) != 0) {
      std::cerr << "ntprofd probe: --placement checks a BINARY, not a PID: give the file the process runs ("
                << "readlink /proc/" << binary << "/exe), with its LD_LIBRARY_PATH\n";
      code = cli::kFailed;
      continue;
    }
    auto report = CheckPlacement(RoleOf(spdk), binary, spdk.spdk_version);
    if (!report.ok()) {
      std::cerr << "ntprofd probe: " << binary << ": " << report.status().message() << "\n";
      code = cli::kFailed;
      continue;
    }
    std::cout << (json ? report->ToJson() : report->ToText());
    for (const std::string& problem : report->problems) std::cerr << "ntprofd probe: " << problem << "\n";
    if (!report->ok()) code = cli::kFailed;
  }
  return code;
}

}  // namespace

int RunSpdkProbe(const SpdkCliArgs& spdk, bool json) {
  if (spdk.placement) return RunPlacementCheck(spdk, json);
  auto text = DescribeSpdkProbes(RoleOf(spdk), ArgsOf(spdk));
  if (!text.ok()) {
    std::cerr << "ntprofd probe: " << text.status().message() << "\n";
    return cli::kFailed;
  }
  std::cout << *text;
  return cli::kOk;
}

int RunSpdkRecord(const SpdkCliArgs& spdk, const SpdkRecordRequest& req,
                  const std::atomic<bool>& stop) {
  SpdkRecordingOptions o;
  o.role = RoleOf(spdk);
  o.targets = ArgsOf(spdk);
  o.sample_rate = req.sample_rate;
  o.salt = req.salt;
  o.duration_s = req.duration;
  o.interval_s = req.interval;
  o.session_name = req.session;
  o.transport = req.transport;
  const bool quiet = req.quiet;
  SpdkRecorder::LogCallback log;
  if (!quiet || req.verbose) log = [](const std::string& line) { std::cerr << "ntprofd: " << line << "\n"; };
  if (geteuid() != 0)
    std::cerr << "ntprofd record: not root; attaching uprobes and writing /proc/PID/mem will likely fail\n";

  auto recorder = SpdkRecorder::Start(o, log);
  if (!recorder.ok()) {
    std::cerr << "ntprofd record: " << recorder.status().message() << "\n";
    return cli::kFailed;
  }
  SpdkRecorder& r = **recorder;
  auto sink = NtpFileSink::Create(req.output, r.header());
  if (!sink.ok()) {
    std::cerr << "ntprofd record: cannot write " << req.output << ": " << sink.status().message() << "\n";
    return cli::kFailed;
  }
  if (!quiet) {
    std::cerr << "ntprofd: recording SPDK " << (o.role == SpdkRole::kTarget ? "target" : "host")
              << ", 1 command in " << req.sample_rate << ", salt " << req.salt << " -> " << req.output
              << " (" << r.attached_processes() << " process(es) attached; watching for more)\n";
  }
  // One side recorded alone: the scope of every interval is known before its first record.
  IntervalSummary summary(req.sample_rate,
                          o.role == SpdkRole::kTarget ? Scope::kTargetOnly : Scope::kHostOnly);
  uint64_t total = 0;
  auto on_interval = [&](const agent::BatchShare& batch, uint64_t interval_ns,
                         bool interval_end) {
    total += batch.size();
    if (quiet) return;
    google::protobuf::Arena arena;  // the batch decoded for the summary alone
    summary.AddBatch(batch.ToMessage(&arena));
    if (!interval_end) return;
    for (const std::string& line : IntervalSummary::Lines(summary.Take(interval_ns)))
      std::cout << line << "\n";
    std::cout.flush();
  };
  absl::Status st = r.Run(**sink, stop, on_interval);
  if (!st.ok()) {
    std::cerr << "ntprofd record: " << st.message() << "\n";
    return cli::kFailed;
  }
  if (!quiet)
    std::cerr << "ntprofd: " << r.stop_reason() << "; sampling switched off; " << total
              << " records in " << req.output << "\n";
  return cli::kOk;
}

}  // namespace ntprof::agent::spdk
