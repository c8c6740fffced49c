#include "gate_json.h"

#include "gate_text.h"

namespace ntprof {

nlohmann::json ToJson(const GateResult& result) {
  nlohmann::json checks = nlohmann::json::array();
  for (const BoundCheck& c : result.checks) {
    nlohmann::json j = {
        {"bound", c.bound.text},
        {"group", c.group},
        {"subject", std::string(c.bound.SubjectId())},
        {"statistic", c.bound.statistic.Name()},
        {"verdict", VerdictName(c.verdict)},
        {"unit", c.bound.relative ? "fraction" : "ns"},
        {"limit", c.bound.limit},
    };
    if (c.verdict == BoundCheck::Verdict::kUndecided) {
      j["why"] = c.why;
    } else {
      j["base_ns"] = c.change.base;
      j["new_ns"] = c.change.next;
      j["change"] = c.change.change;
      j["low"] = c.change.low;
      j["high"] = c.change.high;
      j["base_commands"] = c.base_n;
      j["new_commands"] = c.new_n;
    }
    checks.push_back(std::move(j));
  }
  return {{"confidence", result.confidence},
          {"verdict", result.crossed()              ? "crossed"
                      : !result.undecided.empty() ? "undecided"
                                                   : "passed"},
          {"checks", checks},
          {"undecided", result.undecided}};
}

}  // namespace ntprof
