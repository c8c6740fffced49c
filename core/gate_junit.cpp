#include "gate_junit.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gate_text.h"
#include "svg_chart.h"  // EscapeHtml: XML attributes and text need the same

namespace ntprof {

std::string ToJUnit(const GateResult& result) {
  // The checks of each bound, in the order the bounds were given.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const BoundCheck*>> by_bound;
  for (const BoundCheck& c : result.checks) {
    if (by_bound[c.bound.text].empty()) order.push_back(c.bound.text);
    by_bound[c.bound.text].push_back(&c);
  }
  std::map<std::string, std::string> undecided;  // bound text -> why
  for (const std::string& u : result.undecided) {
    const size_t colon = u.find(": ");
    const std::string bound = u.substr(0, colon);
    undecided[bound] = u;
    if (by_bound.find(bound) == by_bound.end()) {
      order.push_back(bound);
      by_bound[bound];
    }
  }
  std::string cases;
  size_t failures = 0, errors = 0;
  for (const std::string& bound : order) {
    std::vector<std::string> crossed, all;
    for (const BoundCheck* c : by_bound[bound]) {
      all.push_back(CheckLine(*c));
      if (c->verdict == BoundCheck::Verdict::kCrossed) crossed.push_back(CheckLine(*c));
    }
    absl::StrAppend(&cases, "    <testcase classname=\"ntprof.gate\" name=\"", EscapeHtml(bound),
                    "\">\n");
    if (!crossed.empty()) {
      ++failures;
      absl::StrAppend(&cases, "      <failure message=\"", EscapeHtml(absl::StrJoin(crossed, "; ")),
                      "\" type=\"regression\">", EscapeHtml(absl::StrJoin(all, "\n")),
                      "</failure>\n");
    } else if (undecided.count(bound) != 0) {
      ++errors;
      absl::StrAppend(&cases, "      <error message=\"", EscapeHtml(undecided[bound]),
                      "\" type=\"undecided\">", EscapeHtml(absl::StrJoin(all, "\n")), "</error>\n");
    } else {
      absl::StrAppend(&cases, "      <system-out>", EscapeHtml(absl::StrJoin(all, "\n")),
                      "</system-out>\n");
    }
    absl::StrAppend(&cases, "    </testcase>\n");
  }
  const std::string counts =
      absl::StrCat("tests=\"", order.size(), "\" failures=\"", failures, "\" errors=\"", errors, "\"");
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ntprof\" ",
                      counts, ">\n  <testsuite name=\"ntprof regression gate (",
                      ConfidenceText(result.confidence), " intervals)\" ", counts, ">\n", cases,
                      "  </testsuite>\n</testsuites>\n");
}

}  // namespace ntprof
