#include "regression_gate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "command_samples.h"

namespace ntprof {
namespace {

const GroupReport* Named(const Report& report, const std::string& name) {
  for (const GroupReport& g : report.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

std::string LabelOf(const RegressionBound& bound, const GroupReport& g) {
  if (bound.component) return std::string(ComponentLabel(*bound.component));
  for (const StageRow& row : g.stages) {
    if (row.stage == *bound.stage) return row.label;
  }
  return std::string(StageId(*bound.stage));
}

const std::vector<int64_t>& ValuesOf(const RegressionBound& bound, const CommandSamples& s) {
  return bound.stage ? s.StageValues(*bound.stage) : s.ComponentValues(*bound.component);
}

uint64_t SeenOf(const RegressionBound& bound, const CommandSamples& s) {
  return bound.stage ? s.StageSeen(*bound.stage) : s.ComponentSeen(*bound.component);
}

// FNV-1a: each check its own generator stream, the same on every machine (std::hash is not).
uint64_t SeedOf(uint64_t seed, const std::string& text) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

BoundCheck Check(const RegressionBound& bound, const GroupReport& base, const GroupReport& next,
                 const std::string& group, const BootstrapOptions& options) {
  BoundCheck check;
  check.bound = bound;
  check.group = group;
  check.label = LabelOf(bound, base);
  if (!base.samples || !next.samples) {
    check.why = "the report kept no per-command values";
    return check;
  }
  const std::vector<int64_t>& b = ValuesOf(bound, *base.samples);
  const std::vector<int64_t>& n = ValuesOf(bound, *next.samples);
  check.base_n = b.size();
  check.new_n = n.size();
  check.base_seen = SeenOf(bound, *base.samples);
  check.new_seen = SeenOf(bound, *next.samples);
  if (b.empty() || n.empty()) {
    check.why = absl::StrCat(check.label, " was not recorded in ", b.empty() ? "BASE" : "NEW");
    return check;
  }
  const uint64_t fewest = FewestCommandsFor(bound.statistic);
  if (std::min(b.size(), n.size()) < fewest) {
    check.why = absl::StrCat(std::min(b.size(), n.size()), " commands in ",
                             b.size() < n.size() ? "BASE" : "NEW", "; ",
                             bound.statistic.Name(), " needs at least ", fewest,
                             " (sample more: a smaller -s or a longer run)");
    return check;
  }
  BootstrapOptions seeded = options;
  seeded.seed = SeedOf(options.seed, bound.text + "\n" + group);
  check.change = BootstrapChange(b, n, bound.statistic, bound.relative, seeded);
  if (bound.relative && check.change.base <= 0) {
    check.why = absl::StrCat("BASE's ", bound.statistic.Name(),
                             " is 0 ns: no relative change; bound it in ns or us");
    return check;
  }
  const bool beyond = bound.above ? check.change.low > bound.limit : check.change.high < bound.limit;
  check.verdict = beyond ? BoundCheck::Verdict::kCrossed : BoundCheck::Verdict::kWithin;
  return check;
}

}  // namespace

bool GateResult::crossed() const {
  return std::any_of(checks.begin(), checks.end(), [](const BoundCheck& c) {
    return c.verdict == BoundCheck::Verdict::kCrossed;
  });
}

uint64_t FewestCommandsFor(Statistic statistic) {
  if (statistic.kind == Statistic::Kind::kMean) return 20;
  const double tail = std::min(statistic.percentile, 100 - statistic.percentile) / 100;
  return static_cast<uint64_t>(std::ceil(10 / tail - 1e-9));
}

GateResult ApplyGate(const Report& base, const Report& next, const Comparison& comparison,
                     const std::vector<RegressionBound>& bounds, const BootstrapOptions& options) {
  GateResult result;
  result.confidence = options.confidence;
  for (const RegressionBound& bound : bounds) {
    bool decided = false;
    std::string why = "no group of both runs matches";
    for (const GroupComparison& gc : comparison.groups) {
      if (!absl::StartsWith(gc.base_name, bound.group) &&
          !absl::StartsWith(gc.new_name, bound.group)) {
        continue;
      }
      const GroupReport* b = Named(base, gc.base_name);
      const GroupReport* n = Named(next, gc.new_name);
      if (!b || !n) continue;
      BoundCheck check = Check(bound, *b, *n, gc.name, options);
      if (check.verdict == BoundCheck::Verdict::kUndecided) {
        why = absl::StrCat(check.group, ": ", check.why);
      } else {
        decided = true;
      }
      result.checks.push_back(std::move(check));
    }
    if (!decided) result.undecided.push_back(absl::StrCat(bound.text, ": ", why));
  }
  return result;
}

}  // namespace ntprof
