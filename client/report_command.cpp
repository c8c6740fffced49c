#include "report_command.h"

#include <iostream>

#include "collector_target.h"
#include "exit_codes.h"
#include "fleet_selection.h"
#include "html_page.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "output_format.h"
#include "recording_set.h"
#include "report_html.h"
#include "report_json.h"
#include "report_text.h"
#include "session_report.h"

namespace ntprof::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  bool detail = false;
  std::string format = "text";
  double window_s = 10;
  bool salvage = false;
  uint32_t slowest = 0;
  std::string html;  // --html FILE
  CollectorFlags collector;
  FleetFlags fleet;
};

int PrintReport(const ReportArgs& args, const Report& report) {
  if (!args.html.empty()) {
    return WriteHtmlPage("report", args.html, RenderHtml(report, HtmlOptions{args.detail}));
  }
  if (args.format == "json") {
    std::cout << ToJson(report).dump(2) << "\n";
  } else {
    std::cout << RenderText(report, TextOptions{args.detail});
  }
  return kOk;
}

// From the fleet store: the arguments are sessions, the flags narrow the selection.
int RunFleetReport(const ReportArgs& args) {
  auto selection = SelectionOf(args.fleet, args.inputs, args.fleet.from, args.fleet.to);
  if (!selection.ok()) {
    std::cerr << "ntprofctl report: " << selection.status().message() << "\n";
    return kBadInput;
  }
  auto report = FleetReport(args.fleet, *selection, ReportExtras{args.slowest, !args.html.empty()});
  if (!report.ok()) {
    std::cerr << "ntprofctl report: " << report.status().message() << "\n";
    return report.status().code() == absl::StatusCode::kUnavailable ? kFailed : kBadInput;
  }
  return PrintReport(args, *report);
}

// The collector renders a session's report with the same code as a file report.
int RunSessionReport(const ReportArgs& args) {
  v1::ReportRequest request;
  request.set_session(args.inputs.front());
  request.set_detail(args.detail);
  request.set_format(!args.html.empty()     ? v1::OUTPUT_HTML
                     : args.format == "json" ? v1::OUTPUT_JSON
                                             : v1::OUTPUT_TEXT);
  request.set_slowest(args.slowest);
  std::string text;
  if (int exit = FetchSessionReport("report", args.collector, request, &text); exit != kOk) {
    return exit;
  }
  if (!args.html.empty()) return WriteHtmlPage("report", args.html, text);
  std::cout << text;
  return kOk;
}

int RunReport(const ReportArgs& args) {
  if (!args.fleet.url.empty()) return RunFleetReport(args);
  if (args.inputs.empty()) {
    std::cerr << "ntprofctl report: give recordings, a session, or --clickhouse URL\n";
    return kBadInput;
  }
  if (args.inputs.size() == 1 && NamesSession(args.inputs.front())) return RunSessionReport(args);
  auto files = ExpandRecordingArgs(args.inputs);
  if (!files.ok()) {
    std::cerr << "ntprofctl report: " << files.status().message() << "\n";
    return kBadInput;
  }
  ReportOptions options;
  options.read.salvage = args.salvage;
  options.join.window_ns = static_cast<int64_t>(args.window_s * 1e9);
  options.extras = ReportExtras{args.slowest, !args.html.empty()};
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
  return PrintReport(args, *report);
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
stages. Arguments may be files, directories of .ntp files, or comma-separated lists. One name that
is not a file on disk names a session: the collector reports it, in the same layout.

--slowest N adds the N slowest sampled commands (by end to end; in target for a target recorded
alone), one per line: start (approximate wall time, UTC, from the file's clock pair), host and
target agent, qid, cid, opcode, LBA, bytes, end to end and every stage in us. In -o json they are
"slowest" (stage ids as keys). Only N commands are held in memory, whatever the recording's size.

--html FILE writes one self-contained page instead of printing (no script, nothing fetched; it
works offline and can be mailed): per group a stacked bar of the stage means (and the components
with --detail), the percentile table, the latency distribution of end to end and each stage (a
cumulative curve on a log time axis, the tail stretched), each stage's mean over time (so a
transient shows where it happened), the slowest commands with --slowest, and the records, losses
and notes of the text report. FILE "-" writes the page to stdout.

--clickhouse URL reports from the fleet store the collectors write (ntprof-collector --clickhouse):
every command of the selection, across sessions and collectors, through the same report code, so
the stages, percentiles and record counts equal the file report of the same records. The
arguments are then session names (none: every session) and --from/--to, --subsystem, --host,
--target, --class narrow the selection. Throughput and the agents' losses are not in the store.

Examples:
  ntprofctl report base                  # session "base" on the collector
  ntprofctl report run1/host.ntp run1/target.ntp
  ntprofctl report run1/ --detail
  ntprofctl report run1/ -o json | jq '.groups[0].stages'
  ntprofctl report run1/ --slowest 10    # the commands behind the p99.9
  ntprofctl report run1/ --detail --slowest 20 --html run1.html
  ntprofctl report base --html base.html # a session, rendered by the collector
  ntprofctl report --clickhouse http://ch1:8123 --from 2026-12-01T10:00:00Z --to 2026-12-01T11:00:00Z
  ntprofctl report --clickhouse http://ch1:8123 base --host web1 --class read-4KiB -o json

Exit status: 0 on success, 2 when a recording is unreadable, corrupt or does not belong with the
others (the message names the file and the problem; nothing else is printed) or the session is
unknown, 1 when the collector cannot be reached or the --html FILE cannot be written.)HELP");
  cmd->add_option("recordings", args->inputs,
                  "Recordings (.ntp files or directories) or a session (sessions with --clickhouse)");
  cmd->add_flag("--detail", args->detail,
                "Also print the components of each stage (n, mean, L, p50, p99)");
  AddOutputFlag(cmd, &args->format);
  cmd->add_option("--window", args->window_s,
                  "Seconds a half waits for its other half before it counts as unmatched")
      ->default_str("10")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--slowest", args->slowest,
                  "Also list the N slowest sampled commands, one per line, with every stage")
      ->type_name("N")
      ->check(CLI::Range(1u, 100'000u));
  AddHtmlFlag(cmd, &args->html);
  cmd->add_flag("--salvage", args->salvage,
                "Read the intact batches of a truncated recording instead of refusing it");
  AddCollectorFlags(cmd, &args->collector);
  AddFleetFlags(cmd, &args->fleet);
  cmd->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace ntprof::cli
