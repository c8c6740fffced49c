#include "compare_command.h"

#include <iostream>

#include "comparison.h"
#include "exit_codes.h"
#include "output_format.h"
#include "recording_set.h"
#include "report_json.h"
#include "report_text.h"

namespace ntprof::cli {
namespace {

struct CompareArgs {
  std::string base;
  std::string next;
  std::string format = "text";
};

absl::StatusOr<Report> ReportOf(const std::string& arg) {
  auto files = ExpandRecordingArgs({arg});
  if (!files.ok()) return files.status();
  auto set = RecordingSet::Open(*files);
  if (!set.ok()) return set.status();
  return set->BuildReport();
}

int RunCompare(const CompareArgs& args) {
  auto base = ReportOf(args.base);
  if (!base.ok()) {
    std::cerr << "ntprofctl compare: " << base.status().message() << "\n";
    return kBadInput;
  }
  auto next = ReportOf(args.next);
  if (!next.ok()) {
    std::cerr << "ntprofctl compare: " << next.status().message() << "\n";
    return kBadInput;
  }
  Comparison comparison = Compare(*base, *next);
  if (args.format == "json") {
    std::cout << ToJson(comparison).dump(2) << "\n";
  } else {
    std::cout << RenderText(comparison);
  }
  return kOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs stage by stage");
  cmd->footer(R"HELP(
BASE and NEW are each one run: a directory of .ntp files, one file, or a comma-separated list of
files (host and target halves). For every group present in both runs, prints each stage's mean
side by side with the difference and ratio, and names the stage whose mean grew most (absolute)
and, if different, the one with the largest ratio. Two runs on different transports (TCP vs RDMA)
print with the transports as column heads.

Examples:
  ntprofctl compare baseline/ slow-drive/
  ntprofctl compare tcp/host.ntp,tcp/target.ntp rdma/host.ntp,rdma/target.ntp -o json)HELP");
  cmd->add_option("base", args->base, "The run to compare against")->required();
  cmd->add_option("new", args->next, "The run to compare")->required();
  AddOutputFlag(cmd, &args->format);
  cmd->callback([args, exit_code] { *exit_code = RunCompare(*args); });
}

}  // namespace ntprof::cli
