#include "regression_bound.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ntprof {
namespace {

constexpr absl::string_view kGrammar =
    "write [GROUP:]STAGE.STATISTIC > CHANGE, e.g. 'storage.p99 > +10%' or "
    "'end-to-end.mean > +20us'";

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--fail-if '", text, "': ", why, "; ", kGrammar));
}

std::string SubjectIds() {
  std::vector<std::string> ids;
  for (size_t i = 0; i < kStageCount; ++i) {
    ids.push_back(absl::StrReplaceAll(std::string(StageId(static_cast<Stage>(i))), {{"_", "-"}}));
  }
  for (size_t i = 0; i < kComponentCount; ++i) {
    ids.push_back(absl::StrReplaceAll(std::string(ComponentId(static_cast<Component>(i))), {{"_", "-"}}));
  }
  return absl::StrJoin(ids, ", ");
}

// "storage", "end-to-end" or "end_to_end", "drive".
bool ParseSubject(absl::string_view word, RegressionBound* bound) {
  const std::string id = absl::StrReplaceAll(word, {{"-", "_"}});
  for (size_t i = 0; i < kStageCount; ++i) {
    if (StageId(static_cast<Stage>(i)) == id) {
      bound->stage = static_cast<Stage>(i);
      return true;
    }
  }
  for (size_t i = 0; i < kComponentCount; ++i) {
    if (ComponentId(static_cast<Component>(i)) == id) {
      bound->component = static_cast<Component>(i);
      return true;
    }
  }
  return false;
}

absl::Status ParseStatistic(absl::string_view text, absl::string_view word, Statistic* statistic) {
  if (word == "mean") {
    *statistic = Statistic::Mean();
    return absl::OkStatus();
  }
  if (word == "max" || word == "min") {
    return Bad(text, absl::StrCat(word, " is one command, not a statistic a sample can bound; "
                                        "bound a percentile (p99.9) instead"));
  }
  double q = 0;
  if (word.size() < 2 || word[0] != 'p' || !absl::SimpleAtod(word.substr(1), &q) ||
      !(q > 0 && q < 100)) {
    return Bad(text, absl::StrCat("unknown statistic '", word,
                                  "': mean, or pN with 0 < N < 100 (p50, p90, p99, p99.9)"));
  }
  *statistic = Statistic::Percentile(q);
  return absl::OkStatus();
}

// "+10%", "-5 %", "20us", "+1.5ms".
absl::Status ParseChange(absl::string_view text, absl::string_view word, RegressionBound* bound) {
  struct Unit {
    absl::string_view suffix;
    double scale;  // to nanoseconds, or to a fraction for %
    bool relative;
  };
  static constexpr Unit kUnits[] = {{"%", 0.01, true},  {"ns", 1, false},   {"us", 1e3, false},
                                    {"µs", 1e3, false}, {"ms", 1e6, false}, {"s", 1e9, false}};
  for (const Unit& unit : kUnits) {
    if (!absl::EndsWith(word, unit.suffix)) continue;
    absl::string_view number =
        absl::StripAsciiWhitespace(word.substr(0, word.size() - unit.suffix.size()));
    if (!number.empty() && number[0] == '+') number.remove_prefix(1);
    double value = 0;
    if (number.empty() || !absl::SimpleAtod(number, &value) || !std::isfinite(value)) break;
    bound->limit = value * unit.scale;
    bound->relative = unit.relative;
    return absl::OkStatus();
  }
  return Bad(text, absl::StrCat("the change '", word,
                                "' needs a number and a unit: % (of BASE), ns, us, ms or s"));
}

}  // namespace

std::string_view RegressionBound::SubjectId() const {
  return stage ? StageId(*stage) : ComponentId(*component);
}

std::string RegressionBound::LimitText() const {
  if (relative) return absl::StrFormat("%+g%%", limit * 100);
  if (std::fabs(limit) >= 1e6) return absl::StrFormat("%+gms", limit / 1e6);
  if (std::fabs(limit) >= 1e3) return absl::StrFormat("%+gus", limit / 1e3);
  return absl::StrFormat("%+gns", limit);
}

absl::StatusOr<RegressionBound> ParseRegressionBound(absl::string_view text) {
  RegressionBound bound;
  bound.text = std::string(absl::StripAsciiWhitespace(text));
  const size_t op = bound.text.find_first_of("<>");
  if (op == std::string::npos) return Bad(text, "no '>' or '<'");
  bound.above = bound.text[op] == '>';
  absl::string_view left = absl::StripAsciiWhitespace(absl::string_view(bound.text).substr(0, op));
  absl::string_view right =
      absl::StripAsciiWhitespace(absl::string_view(bound.text).substr(op + 1));
  if (!right.empty() && right[0] == '=') {
    return Bad(text, "use > or < (a bound on a sampled statistic has no 'equal')");
  }
  // The group prefix ends at the last ':' (group names hold spaces, never ':').
  if (const size_t colon = left.rfind(':'); colon != absl::string_view::npos) {
    bound.group = std::string(absl::StripAsciiWhitespace(left.substr(0, colon)));
    left = absl::StripAsciiWhitespace(left.substr(colon + 1));
    if (bound.group.empty()) return Bad(text, "an empty group before ':'");
  }
  // The statistic follows the subject's first '.': p99.9 has a '.' of its own.
  const size_t dot = left.find('.');
  if (dot == absl::string_view::npos) return Bad(text, "no '.STATISTIC' after the stage");
  if (!ParseSubject(left.substr(0, dot), &bound)) {
    return Bad(text, absl::StrCat("unknown stage or component '", left.substr(0, dot),
                                  "'; they are ", SubjectIds()));
  }
  if (auto st = ParseStatistic(text, left.substr(dot + 1), &bound.statistic); !st.ok()) return st;
  if (auto st = ParseChange(text, right, &bound); !st.ok()) return st;
  return bound;
}

}  // namespace ntprof
