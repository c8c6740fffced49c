#include "gate_flags.h"

#include <iostream>

#include "exit_codes.h"
#include "gate_junit.h"
#include "gate_markdown.h"
#include "html_page.h"

namespace ntprof::cli {

const char kGateHelp[] = R"HELP(
Regression gate: --fail-if BOUND (repeatable) fails the command (exit 1) when NEW is worse than
BASE beyond BOUND, and only when sampling noise cannot explain it:

  BOUND      [GROUP:]STAGE.STATISTIC > CHANGE     (or < CHANGE: fail when it fell by more)
  GROUP      a prefix of a group's name (read, write 16KiB); without it every group both runs have
  STAGE      a stage or component id: host-block, host-driver, network, target-driver, storage,
             end-to-end, target-total, local-device, network-and-target, ...; drive, fabric, ...
  STATISTIC  mean, or pN: the N-th percentile, 0 < N < 100 (p50, p90, p99, p99.9)
  CHANGE     a number with % (relative to BASE's) or a unit: ns, us, ms, s (absolute)

  e.g.  --fail-if 'storage.p99 > +10%'  --fail-if 'end-to-end.mean > +20us'
        --fail-if 'write:drive.p99.9 > +1ms'

Each bounded statistic's change comes with a bootstrap confidence interval (--confidence, 0.95 by
default): BASE's and NEW's sampled commands are resampled independently, 1000 times, with a fixed
seed (the same runs give the same interval). A bound is crossed only when the whole interval lies
beyond it. A percentile needs 10 sampled commands beyond it on each side (p99: 1000 commands, p99.9:
10000), the mean 20. --junit FILE writes one JUnit test case per bound (the figures in its
message), --markdown FILE a summary table for a CI job's page.

Exit status with --fail-if: 0 no bound crossed, 1 a bound crossed, 2 bad input, or a bound that no
group could decide (a stage one run lacks, too few commands; the output says which).)HELP";

void AddGateFlags(CLI::App* cmd, GateFlags* flags) {
  const std::string group = "Regression gate";
  cmd->add_option("--fail-if", flags->bounds,
                  "Fail (exit 1) when NEW is worse than BASE beyond BOUND, e.g. "
                  "'storage.p99 > +10%' (repeatable; grammar below)")
      ->type_name("BOUND")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
  cmd->add_option("--confidence", flags->confidence,
                  "Confidence of each change's interval, 0.5 to 0.999")
      ->check(CLI::Range(0.5, 0.999))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--junit", flags->junit, "With --fail-if: write JUnit XML, one test case per bound")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--markdown", flags->markdown,
                  "With --fail-if: write a Markdown summary for a CI job's page")
      ->type_name("FILE")
      ->group(group);
}

bool CheckGateFlags(const std::string& verb, GateFlags* flags) {
  if (!flags->active() && (!flags->junit.empty() || !flags->markdown.empty())) {
    std::cerr << "ntprofctl " << verb << ": --junit and --markdown report the gate: give "
              << "--fail-if BOUND too\n";
    return false;
  }
  flags->parsed.clear();
  for (const std::string& text : flags->bounds) {
    auto bound = ParseRegressionBound(text);
    if (!bound.ok()) {
      std::cerr << "ntprofctl " << verb << ": " << bound.status().message() << "\n";
      return false;
    }
    flags->parsed.push_back(*bound);
  }
  return true;
}

ReportOptions WithGateSamples(ReportOptions options) {
  options.extras.samples = kGateSamples;
  return options;
}

int DecideGate(const std::string& verb, const GateFlags& flags, const Report& base,
               const Report& next, const Comparison& comparison, GateResult* result) {
  BootstrapOptions options;
  options.confidence = flags.confidence;
  *result = ApplyGate(base, next, comparison, flags.parsed, options);
  int status = result->crossed() ? kFailed : result->undecided.empty() ? kOk : kBadInput;
  if (!flags.junit.empty() && WriteHtmlPage(verb, flags.junit, ToJUnit(*result)) != kOk) {
    status = kFailed;
  }
  if (!flags.markdown.empty() &&
      WriteHtmlPage(verb, flags.markdown, ToMarkdown(*result, base.title, next.title)) != kOk) {
    status = kFailed;
  }
  if (status == kBadInput) {
    std::cerr << "ntprofctl " << verb << ": the gate could not decide "
              << result->undecided.size() << " bound(s): " << result->undecided.front() << "\n";
  }
  return status;
}

}  // namespace ntprof::cli
