#include "gate_markdown.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gate_text.h"

namespace ntprof {
namespace {

// A table cell: '|' would end it, a newline the row.
std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

}  // namespace

std::string ToMarkdown(const GateResult& result, const std::string& base_title,
                       const std::string& new_title) {
  const char* verdict = result.crossed()             ? "**regression**: a bound was crossed"
                        : !result.undecided.empty() ? "**undecided**: a bound had nothing to decide on"
                                                     : "**passed**: no bound crossed";
  std::string out = absl::StrCat("### ntprof regression gate: ", verdict, "\n\n",
                                 "BASE `", Cell(base_title), "`, NEW `", Cell(new_title), "`; ",
                                 ConfidenceText(result.confidence),
                                 " bootstrap intervals, a bound fails only when the whole "
                                 "interval is beyond it.\n\n",
                                 "| | bound | group | BASE | NEW | change [interval] |\n"
                                 "|---|---|---|---:|---:|---|\n");
  for (const BoundCheck& c : result.checks) {
    if (c.verdict == BoundCheck::Verdict::kUndecided) {
      absl::StrAppend(&out, "| ❔ | `", Cell(c.bound.text), "` | ", Cell(c.group), " | | | ",
                      Cell(c.why), " |\n");
      continue;
    }
    absl::StrAppend(&out, "| ", c.verdict == BoundCheck::Verdict::kCrossed ? "❌" : "✅", " | `",
                    Cell(c.bound.text), "` | ", Cell(c.group), " | ", Microseconds(c.change.base),
                    " | ", Microseconds(c.change.next), " | ", ChangeWithInterval(c), " |\n");
  }
  for (const std::string& u : result.undecided) absl::StrAppend(&out, "\nundecided: ", Cell(u), "\n");
  return out;
}

}  // namespace ntprof
