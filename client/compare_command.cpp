#include "compare_command.h"

#include <iostream>

#include "comparison.h"
#include "collector_target.h"
#include "exit_codes.h"
#include "fleet_selection.h"
#include "gate_flags.h"
#include "gate_json.h"
#include "gate_text.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "html_page.h"
#include "output_format.h"
#include "recording_set.h"
#include "report_html.h"
#include "report_json.h"
#include "report_text.h"
#include "run_source.h"

namespace ntprof::cli {
namespace {

struct CompareArgs {
  std::string base;
  std::string next;
  std::string format = "text";
  std::string html;  // --html FILE
  CollectorFlags collector;
  FleetFlags fleet;
  std::string base_from, base_to;  // the base's time range from the fleet store
  GateFlags gate;
};

int PrintComparison(const CompareArgs& args, const Comparison& comparison) {
  if (!args.html.empty()) return WriteHtmlPage("compare", args.html, RenderHtml(comparison));
  if (args.format == "json") {
    std::cout << ToJson(comparison).dump(2) << "\n";
  } else {
    std::cout << RenderText(comparison);
  }
  return kOk;
}

// From the fleet store: two sessions, or two time ranges (--base-from/--base-to against
// --from/--to), each narrowed by the same filters.
int RunFleetCompare(const CompareArgs& args) {
  const bool sessions = !args.base.empty() && !args.next.empty();
  const bool ranges = !args.base_from.empty() || !args.base_to.empty();
  if (sessions == ranges || (!sessions && (!args.base.empty() || !args.next.empty()))) {
    std::cerr << "ntprofctl compare: with --clickhouse, give two sessions (BASE NEW) or a base "
                 "time range (--base-from/--base-to) to compare with --from/--to\n";
    return kBadInput;
  }
  auto base = sessions ? SelectionOf(args.fleet, {args.base}, args.fleet.from, args.fleet.to)
                       : SelectionOf(args.fleet, {}, args.base_from, args.base_to);
  auto next = sessions ? SelectionOf(args.fleet, {args.next}, args.fleet.from, args.fleet.to)
                       : SelectionOf(args.fleet, {}, args.fleet.from, args.fleet.to);
  for (const auto* s : {&base, &next}) {
    if (!s->ok()) {
      std::cerr << "ntprofctl compare: " << s->status().message() << "\n";
      return kBadInput;
    }
  }
  Report reports[2];
  int i = 0;
  for (const auto* s : {&base, &next}) {
    auto report = FleetReport(args.fleet, **s, ReportExtras{.charts = !args.html.empty()});
    if (!report.ok()) {
      std::cerr << "ntprofctl compare: " << report.status().message() << "\n";
      return report.status().code() == absl::StatusCode::kUnavailable ? kFailed : kBadInput;
    }
    reports[i++] = std::move(*report);
  }
  return PrintComparison(args, Compare(reports[0], reports[1]));
}

// Both sides are sessions: the collector compares them.
int RunSessionCompare(const CompareArgs& args) {
  return WithCollector<v1::Collector>("compare", args.collector, [&](auto& stub, auto& target) {
    v1::CompareRequest request;
    request.set_base_session(args.base);
    request.set_new_session(args.next);
    request.set_format(!args.html.empty()     ? v1::OUTPUT_HTML
                       : args.format == "json" ? v1::OUTPUT_JSON
                                               : v1::OUTPUT_TEXT);
    v1::RenderedOutput output;
    const grpc::Status status = stub.Compare(UnaryContext().get(), request, &output);
    if (!status.ok()) return RpcFailure("compare", target, status);
    if (!args.html.empty()) {
      if (!IsHtmlPage(output.text())) return OldCollectorAnswer("compare");
      return WriteHtmlPage("compare", args.html, output.text());
    }
    std::cout << output.text();
    return kOk;
  });
}

int RunCompare(const CompareArgs& args) {
  if (!args.fleet.url.empty()) {
    if (args.gate.active()) {
      std::cerr << "ntprofctl compare: the gate resamples per-command values, which --clickhouse "
                   "does not fetch; `ntprofctl export` both sessions and compare the files\n";
      return kBadInput;
    }
    return RunFleetCompare(args);
  }
  if (args.base.empty() || args.next.empty()) {
    std::cerr << "ntprofctl compare: give BASE and NEW (or --clickhouse URL)\n";
    return kBadInput;
  }
  // The gate needs the records themselves: sessions are fetched and compared here.
  if (NamesSession(args.base) && NamesSession(args.next) && !args.gate.active()) {
    return RunSessionCompare(args);
  }
  // The HTML page draws both runs' distributions; the gate resamples per-command values.
  ReportOptions options{.extras = {.charts = !args.html.empty()}};
  if (args.gate.active()) options = WithGateSamples(options);
  SessionCopy copies[2];
  Report reports[2];
  int i = 0;
  for (const std::string* run : {&args.base, &args.next}) {
    int exit = kOk;
    auto report = ReportOfRun("compare", *run, args.collector, options, &copies[i], &exit);
    if (!report.ok()) {
      if (exit != kOk) return exit;
      std::cerr << "ntprofctl compare: " << report.status().message() << "\n";
      return kBadInput;
    }
    reports[i++] = std::move(*report);
  }
  const Comparison comparison = Compare(reports[0], reports[1]);
  if (!args.gate.active()) return PrintComparison(args, comparison);
  GateResult gate;
  const int gate_exit = DecideGate("compare", args.gate, reports[0], reports[1], comparison, &gate);
  int exit = kOk;
  if (!args.html.empty()) {
    exit = WriteHtmlPage("compare", args.html, RenderHtml(comparison));
    if (args.html != "-") std::cout << RenderText(gate);  // the CI log still shows the verdict
  } else if (args.format == "json") {
    nlohmann::json json = ToJson(comparison);
    json["gate"] = ToJson(gate);
    std::cout << json.dump(2) << "\n";
  } else {
    std::cout << RenderText(comparison) << RenderText(gate);
  }
  return gate_exit != kOk ? gate_exit : exit;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs stage by stage");
  cmd->footer(std::string(R"HELP(
BASE and NEW are each one run: a directory of .ntp files, one file, a comma-separated list of
files (host and target halves), or the name of a session on the collector. For every group present
in both runs, prints each stage's mean side by side with the difference and ratio, and names the
stage whose mean grew most (absolute) and, if different, the one with the largest ratio. Two runs
on different transports (TCP vs RDMA) print with the transports as column heads.

--html FILE writes one self-contained page instead of printing (no script, nothing fetched):
per group both runs' stage bars side by side on one scale, the stage that grew most, and the
table above. FILE "-" writes the page to stdout.

--clickhouse URL compares selections of the fleet store the collectors write: two sessions
(BASE NEW), or a base time range (--base-from/--base-to) against --from/--to; --session,
--subsystem, --host, --target and --class narrow both sides alike.

Examples:
  ntprofctl compare baseline/ slow-drive/
  ntprofctl compare baseline/ slow-drive/ --html slow-drive.html
  ntprofctl compare baseline/ new/ --fail-if 'storage.p99 > +10%' --fail-if 'end-to-end.mean > +20us' \
      --junit gate.xml --markdown gate.md     # exit 1 when a bound is crossed
  ntprofctl compare base slow-drive          # two sessions on the collector
  ntprofctl compare tcp/host.ntp,tcp/target.ntp rdma/host.ntp,rdma/target.ntp -o json
  ntprofctl compare --clickhouse http://ch1:8123 base slow-drive
  ntprofctl compare --clickhouse http://ch1:8123 --subsystem nqn.2026-01.io.example:array1 \
      --base-from 2026-12-01T09:00:00Z --base-to 2026-12-01T10:00:00Z \
      --from 2026-12-01T10:00:00Z --to 2026-12-01T11:00:00Z   # this hour against the one before)HELP") +
              kGateHelp);
  cmd->add_option("base", args->base, "The run to compare against");
  cmd->add_option("new", args->next, "The run to compare");
  AddOutputFlag(cmd, &args->format);
  AddHtmlFlag(cmd, &args->html);
  AddCollectorFlags(cmd, &args->collector);
  AddFleetFlags(cmd, &args->fleet);
  cmd->add_option("--base-from", args->base_from, "With --clickhouse: the base's time range start")
      ->group("Fleet store (ClickHouse)");
  cmd->add_option("--base-to", args->base_to, "With --clickhouse: the base's time range end")
      ->group("Fleet store (ClickHouse)");
  AddGateFlags(cmd, &args->gate);
  cmd->callback([args, exit_code] {
    *exit_code = CheckGateFlags("compare", &args->gate) ? RunCompare(*args) : kBadInput;
  });
}

}  // namespace ntprof::cli
