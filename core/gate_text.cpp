#include "gate_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ntprof {

std::string SubjectOf(const BoundCheck& check) {
  return absl::StrCat(check.label, " ", check.bound.statistic.Name());
}

std::string Microseconds(double ns) { return absl::StrFormat("%.2f us", ns / 1000); }

std::string ChangeText(const BoundCheck& check, double change) {
  if (check.bound.relative) return absl::StrFormat("%+.1f %%", change * 100);
  return absl::StrFormat("%+.2f us", change / 1000);
}

std::string ChangeWithInterval(const BoundCheck& check) {
  return absl::StrCat(ChangeText(check, check.change.change), " [",
                      ChangeText(check, check.change.low), ", ",
                      ChangeText(check, check.change.high), "]");
}

std::string VerdictName(BoundCheck::Verdict verdict) {
  switch (verdict) {
    case BoundCheck::Verdict::kCrossed: return "crossed";
    case BoundCheck::Verdict::kWithin: return "within";
    case BoundCheck::Verdict::kUndecided: return "undecided";
  }
  return "";
}

std::string ConfidenceText(double confidence) {
  return absl::StrFormat("%g %%", confidence * 100);
}

std::string CheckLine(const BoundCheck& check) {
  if (check.verdict == BoundCheck::Verdict::kUndecided) {
    return absl::StrCat(check.group, ": ", SubjectOf(check), " undecided: ", check.why);
  }
  const char* side = check.bound.above ? "above" : "below";
  std::string line = absl::StrCat(
      check.group, ": ", SubjectOf(check), " ",
      absl::StrFormat("%.2f -> %.2f us", check.change.base / 1000, check.change.next / 1000), ", ",
      ChangeWithInterval(check), ": ",
      check.verdict == BoundCheck::Verdict::kCrossed ? "whole interval " : "interval not wholly ",
      side, " ", check.bound.LimitText());
  if (check.base_n < check.base_seen || check.new_n < check.new_seen) {
    absl::StrAppend(&line, absl::StrFormat(" (interval from %d of %d and %d of %d commands)",
                                           check.base_n, check.base_seen, check.new_n,
                                           check.new_seen));
  }
  return line;
}

std::string RenderText(const GateResult& result) {
  std::string out = absl::StrCat("gate (", ConfidenceText(result.confidence),
                                 " intervals; a bound fails only when the whole interval is "
                                 "beyond it):\n");
  for (const BoundCheck& check : result.checks) {
    const char* mark = check.verdict == BoundCheck::Verdict::kCrossed  ? "FAIL"
                       : check.verdict == BoundCheck::Verdict::kWithin ? "pass"
                                                                       : "----";
    absl::StrAppend(&out, "  ", mark, "  ", check.bound.text, "  ", CheckLine(check), "\n");
  }
  for (const std::string& u : result.undecided) absl::StrAppend(&out, "  undecided: ", u, "\n");
  size_t crossed = 0;
  for (const BoundCheck& check : result.checks) {
    if (check.verdict == BoundCheck::Verdict::kCrossed) ++crossed;
  }
  absl::StrAppend(&out, "gate: ",
                  crossed > 0                  ? absl::StrCat("FAILED, ", crossed, " crossed")
                  : !result.undecided.empty() ? std::string("UNDECIDED")
                                               : std::string("passed"),
                  "\n");
  return out;
}

}  // namespace ntprof
