#include "run_command.h"

#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_join.h"
#include "agent_answers.h"
#include "collector_target.h"
#include "comparison.h"
#include "exit_codes.h"
#include "gate_flags.h"
#include "gate_json.h"
#include "gate_text.h"
#include "html_page.h"
#include "output_format.h"
#include "report_json.h"
#include "report_text.h"
#include "run_source.h"
#include "session_lookup.h"
#include "session_report.h"
#include "session_start.h"
#include "whole_number.h"
#include "workload_process.h"

namespace ntprof::cli {
namespace {

struct RunArgs {
  CollectorFlags collector;
  SessionStartFlags session;
  std::string format = "text";
  std::string html;
  std::string baseline;
  GateFlags gate;
  uint32_t settle_s = 10;  // after the stop, for the agents' last records
  std::vector<std::string> command;
};

// Every agent that opened the session has sent its last records (SessionClosed), or is gone.
bool AllClosed(const v1::SessionInfo& info) {
  for (const auto& a : info.agents()) {
    if (a.opened() && a.connected() && !a.closed()) return false;
  }
  return true;
}

// Stops the session and waits up to --settle for the agents' last batches; returns the exit
// status of the stop (a late agent is said on stderr, not an error: its records so far are in).
int StopAndSettle(v1::Collector::Stub& stub, const CollectorTarget& target, const RunArgs& args) {
  v1::StopSessionRequest request;
  request.set_name(args.session.name);
  v1::SessionInfo info;
  const grpc::Status status = stub.StopSession(UnaryContext().get(), request, &info);
  if (!status.ok()) return RpcFailure("run", target, status);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.settle_s);
  while (!AllClosed(info) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::optional<v1::SessionInfo> found;
    if (!FindSession(stub, args.session.name, &found).ok() || !found) break;
    info = *found;
  }
  if (!AllClosed(info)) {
    std::vector<std::string> late;
    for (const auto& a : info.agents()) {
      if (a.opened() && a.connected() && !a.closed()) late.push_back(a.hostname());
    }
    std::cerr << "ntprofctl run: " << absl::StrJoin(late, ", ") << " did not send their last "
              << "records within " << args.settle_s << " s of the stop; the report may miss them\n";
  }
  return kOk;
}

// Starts the session; on any failure stops what was started and returns the exit status.
int Start(v1::Collector::Stub& stub, const CollectorTarget& target, const RunArgs& args) {
  v1::SessionInfo info;
  const grpc::Status status = StartAndAwait(stub, args.session, &info);
  if (!status.ok()) return RpcFailure("run", target, status);
  std::string why;
  if (SayRefusals("run", info)) {
    why = "an agent refused";
  } else if (const auto waiting = Unanswered(info); !waiting.empty()) {
    why = "no answer within " + std::to_string(args.session.wait_s) + " s from " +
          absl::StrJoin(waiting, ", ") + " (--wait)";
  } else if (const int sig = CaughtStopSignal(); sig != 0) {
    why = "stopped by signal " + std::to_string(sig);
  }
  if (why.empty()) return kOk;
  std::cerr << "ntprofctl run: session '" << args.session.name << "' not run: " << why
            << "; COMMAND was not started\n";
  // A session every agent refused is stopped already.
  if (info.state() == v1::SESSION_RUNNING) StopAndSettle(stub, target, args);
  return kFailed;
}

v1::OutputFormat FormatOf(const RunArgs& args) {
  return !args.html.empty() ? v1::OUTPUT_HTML
         : args.format == "json" ? v1::OUTPUT_JSON
                                 : v1::OUTPUT_TEXT;
}

// What a run printed and decided: *gate_status is the gate's exit status (0 without a gate).
int PrintResults(const RunArgs& args, const std::optional<Report>& baseline, int* gate_status) {
  v1::ReportRequest request;
  request.set_session(args.session.name);
  request.set_format(FormatOf(args));
  std::string text;
  if (int exit = FetchSessionReport("run", args.collector, request, &text); exit != kOk) return exit;
  int exit = kOk;
  if (!args.html.empty()) {
    exit = WriteHtmlPage("run", args.html, text);
  } else if (!baseline || args.format != "json") {
    std::cout << text;
  }
  if (!baseline) return exit;

  SessionCopy copy;
  int fetch_exit = kOk;
  const ReportOptions options = args.gate.active() ? WithGateSamples({}) : ReportOptions{};
  auto next = ReportOfRun("run", args.session.name, args.collector, options, &copy, &fetch_exit);
  if (!next.ok()) {
    if (fetch_exit != kOk) return fetch_exit;
    std::cerr << "ntprofctl run: session '" << args.session.name
              << "': " << next.status().message() << "\n";
    return kFailed;
  }
  const Comparison comparison = Compare(*baseline, *next);
  GateResult gate;
  if (args.gate.active()) {
    *gate_status = DecideGate("run", args.gate, *baseline, *next, comparison, &gate);
  }
  if (args.format == "json" && args.html.empty()) {
    nlohmann::json json = {{"report", nlohmann::json::parse(text, nullptr, false)},
                           {"comparison", ToJson(comparison)}};
    if (args.gate.active()) json["gate"] = ToJson(gate);
    std::cout << json.dump(2) << "\n";
  } else if (args.html != "-") {
    std::cout << "\n" << RenderText(comparison);
    if (args.gate.active()) std::cout << "\n" << RenderText(gate);
  }
  return exit;
}

int RunRun(RunArgs& args) {
  if (!CheckGateFlags("run", &args.gate)) return kBadInput;
  if (args.gate.active() && args.baseline.empty()) {
    std::cerr << "ntprofctl run: --fail-if compares the run with a baseline: give --baseline BASE\n";
    return kBadInput;
  }
  // The baseline is read first: a bad one must not cost a workload's run.
  std::optional<Report> baseline;
  SessionCopy baseline_copy;
  if (!args.baseline.empty()) {
    const ReportOptions options = args.gate.active() ? WithGateSamples({}) : ReportOptions{};
    int exit = kOk;
    auto report = ReportOfRun("run", args.baseline, args.collector, options, &baseline_copy, &exit);
    if (!report.ok()) {
      if (exit != kOk) return exit;
      std::cerr << "ntprofctl run: --baseline " << report.status().message() << "\n";
      return kBadInput;
    }
    baseline = std::move(*report);
  }
  CatchStopSignals();
  int workload_status = kOk;
  const int run_exit = WithCollector<v1::Collector>("run", args.collector, [&](auto& stub,
                                                                               auto& target) {
    if (const int exit = Start(stub, target, args); exit != kOk) return exit;
    workload_status = RunWorkload(args.command);
    return StopAndSettle(stub, target, args);
  });
  if (run_exit != kOk) return run_exit;
  int gate_status = kOk;
  const int print_exit = PrintResults(args, baseline, &gate_status);
  if (gate_status != kOk) return gate_status;
  if (workload_status != kOk) return workload_status;
  return print_exit;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Record a session around a command (CI labs)");
  cmd->footer(std::string(R"HELP(
Starts session NAME on the selected agents (every connected host and target agent, or --hosts /
--targets), waits until every agent records, runs COMMAND, and stops the session when COMMAND
exits, also when ntprofctl is interrupted (Ctrl-C, SIGTERM: passed on to COMMAND) or the start
failed. Then waits (--settle) for the agents' last records and prints the session's report (-o,
--html), as `ntprofctl report NAME` would.

With --baseline BASE (recordings, a directory of .ntp files, or a session), also prints the
comparison of BASE with this run, and applies the regression gate's bounds (--fail-if, below).
The baseline is read before the session starts: a bad one does not cost a run.

Without a collector, record each side with `ntprofd record` around the workload and gate the files
with `ntprofctl compare BASE NEW --fail-if ...` (docs/ci-labs.md shows both pipelines).

Examples:
  ntprofctl run nightly -s 10 -- fio --name=randread --filename=/dev/nvme1n1 --rw=randread \
      --direct=1 --runtime=60 --time_based
  ntprofctl run pr-1234 --hosts web1 --targets array1 --baseline baseline/ \
      --fail-if 'storage.p99 > +10%' --fail-if 'end-to-end.mean > +20us' \
      --junit gate.xml --markdown gate.md --html report.html -- ./workload.sh

Exit status: COMMAND's exit status (128 + N when signal N ended it), unless the gate decided
otherwise (1 a bound crossed, 2 a bound could not be decided); 1 the session could not be started
(an agent refused or did not answer within --wait: COMMAND is not run), stopped or reported;
2 bad flags or an unreadable baseline.)HELP") +
              kGateHelp);
  cmd->add_option("name", args->session.name, "Session name: letters, digits, . _ -")->required();
  args->session.settings.set_sample_rate(1);
  AddSessionStartFlags(cmd, &args->session, false);
  AddOutputFlag(cmd, &args->format);
  AddHtmlFlag(cmd, &args->html);
  cmd->add_option("--settle", args->settle_s,
                  "After the stop, wait SECONDS for the agents' last records")
      ->check(WholeNumber<uint32_t>(0, 600))
      ->capture_default_str();
  cmd->add_option("--baseline", args->baseline,
                  "Compare the run with BASE (recordings or a session); the gate's bounds need it")
      ->type_name("BASE");
  AddGateFlags(cmd, &args->gate);
  cmd->add_option("command", args->command, "The workload, after --: COMMAND [ARGS...]")
      ->required();
  AddCollectorFlags(cmd, &args->collector);
  cmd->callback([args, exit_code] { *exit_code = RunRun(*args); });
}

}  // namespace ntprof::cli
