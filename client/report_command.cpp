#include "report_command.h"

#include <iostream>

#include "exit_codes.h"
#include "output_format.h"
#include "recording_set.h"
#include "report_json.h"
#include "report_text.h"

namespace ntprof::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  bool detail = false;
  std::string format = "text";
  double window_s = 10;
  bool salvage = false;
};

int RunReport(const ReportArgs& args) {
  auto files = ExpandRecordingArgs(args.inputs);
  if (!files.ok()) {
    std::cerr << "ntprofctl report: " << files.status().message() << "\n";
    return kBadInput;
  }
  ReportOptions options;
  options.read.salvage = args.salvage;
  options.join.window_ns = static_cast<int64_t>(args.window_s * 1e9);
  auto set = RecordingSet::Open(*files, options);
  if (!set.ok()) {
    std::cerr << "ntprofctl report: " << set.status().message() << "\n";
    return kBadInput;
  }
  auto report = set->BuildReport();
  if (!report.ok()) {
    std::cerr << "ntprofctl report: " << report.status().message() << "\n";
    return kBadInput;
  }
  if (args.format == "json") {
    std::cout << ToJson(*report).dump(2) << "\n";
  } else {
    std::cout << RenderText(*report, TextOptions{args.detail});
  }
  return kOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "Stage-by-stage latency report of recordings");
  cmd->footer(R"HELP(
Reads .ntp recordings (a host file, a target file, or both halves of one run), joins the host and
target record of every sampled command, and prints per group (operation, size, device) the latency
and how it splits into stages: host block layer, host driver, network, target driver, storage.
A host file alone shows "network and target (not recorded)"; a target file alone shows the target's
stages. Arguments may be files, directories of .ntp files, or comma-separated lists.

Examples:
  ntprofctl report run1/host.ntp run1/target.ntp
  ntprofctl report run1/ --detail
  ntprofctl report run1/ -o json | jq '.groups[0].stages'

Exit status: 0 on success, 2 when a recording is unreadable, corrupt or does not belong with the
others (the message names the file and the problem; nothing else is printed).)HELP");
  cmd->add_option("recordings", args->inputs, "Recordings: .ntp files or directories")
      ->required();
  cmd->add_flag("--detail", args->detail,
                "Also print the components of each stage (n, mean, L, p50, p99)");
  AddOutputFlag(cmd, &args->format);
  cmd->add_option("--window", args->window_s,
                  "Seconds a half waits for its other half before it counts as unmatched")
      ->default_str("10")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--salvage", args->salvage,
                "Read the intact batches of a truncated recording instead of refusing it");
  cmd->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace ntprof::cli
