// The regression gate on the command line, shared by `compare` and `run`: --fail-if (repeatable),
// --confidence, --junit FILE and --markdown FILE; the decision and the files CI systems read.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "recording_set.h"
#include "regression_gate.h"

namespace ntprof::cli {

// Per-command values kept per stage and run for the bootstrap: all of them in most CI runs; a
// uniform subset beyond (the interval is then that of this many commands: wider, never narrower).
inline constexpr size_t kGateSamples = 50000;

struct GateFlags {
  std::vector<std::string> bounds;  // --fail-if, as given
  double confidence = 0.95;
  std::string junit;     // --junit FILE
  std::string markdown;  // --markdown FILE
  std::vector<RegressionBound> parsed;  // by CheckGateFlags

  bool active() const { return !bounds.empty(); }
};

// The grammar and the exit statuses, for the verbs' --help.
extern const char kGateHelp[];

void AddGateFlags(CLI::App* cmd, GateFlags* flags);

// Parses the bounds and checks that the flags go together; prints one line and returns false
// when they do not (the verb exits 2).
bool CheckGateFlags(const std::string& verb, GateFlags* flags);

// options, keeping the per-command values the gate resamples.
ReportOptions WithGateSamples(ReportOptions options);

// Decides, writes --junit and --markdown. Returns the exit status: 0 passed, 1 a bound crossed
// (or a file could not be written), 2 a bound no group could decide (the message says why).
int DecideGate(const std::string& verb, const GateFlags& flags, const Report& base,
               const Report& next, const Comparison& comparison, GateResult* result);

}  // namespace ntprof::cli
