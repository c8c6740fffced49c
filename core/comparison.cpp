#include "comparison.h"

#include <algorithm>
#include <map>

namespace ntprof {
namespace {

const GroupReport* FindCounterpart(const GroupReport& g, const std::vector<GroupReport>& others) {
  for (const GroupReport& o : others) {
    if (o.name == g.name) return &o;
  }
  // Different device names (two runs on different controllers): same operation and size, if unique.
  const GroupReport* found = nullptr;
  for (const GroupReport& o : others) {
    if (o.op == g.op && o.bytes == g.bytes) {
      if (found) return nullptr;
      found = &o;
    }
  }
  return found;
}

std::optional<double> MeanOf(const GroupReport& g, Stage s) {
  for (const StageRow& row : g.stages) {
    if (row.stage == s) return row.dist.mean_ns;
  }
  return std::nullopt;
}

std::string LabelOf(const GroupReport& a, const GroupReport& b, Stage s) {
  for (const GroupReport* g : {&a, &b}) {
    for (const StageRow& row : g->stages) {
      if (row.stage == s) return row.label;
    }
  }
  return "";
}

GroupComparison CompareGroup(const GroupReport& base, const GroupReport& next) {
  GroupComparison gc;
  gc.name = base.name == next.name ? base.name : base.name + " vs " + next.name;
  gc.base_name = base.name;
  gc.new_name = next.name;
  gc.base_latency = base.latency;
  gc.new_latency = next.latency;
  gc.base_rows = base.stages;
  gc.new_rows = next.stages;
  // Both latencies are end to end (host view) or both in-target: each scope's last stage.
  gc.latency_compared = StagesOf(base.scope).back() == StagesOf(next.scope).back();
  // Stages in the model's order, each once, the total last. A stage only one run has (the other
  // recorded other halves) has nothing to be compared with.
  std::vector<Stage> order;
  for (size_t i = 0; i < kStageCount; ++i) {
    const auto s = static_cast<Stage>(i);
    if (s != Stage::kEndToEnd && s != Stage::kTargetTotal) order.push_back(s);
  }
  order.push_back(Stage::kEndToEnd);
  order.push_back(Stage::kTargetTotal);
  for (Stage s : order) {
    StageDelta d{s, LabelOf(base, next, s), MeanOf(base, s), MeanOf(next, s)};
    if (d.base_mean_ns && d.new_mean_ns) {
      gc.stages.push_back(std::move(d));
    } else if (d.base_mean_ns) {
      gc.base_only.push_back(std::move(d));
    } else if (d.new_mean_ns) {
      gc.new_only.push_back(std::move(d));
    }
  }
  double most = 0;
  double most_ratio = 1;
  for (const StageDelta& d : gc.stages) {
    if (d.stage == Stage::kEndToEnd || d.stage == Stage::kTargetTotal) continue;
    const double grew = *d.new_mean_ns - *d.base_mean_ns;
    if (grew > most) {
      most = grew;
      gc.grew_most = d.stage;
    }
    if (*d.base_mean_ns > 0) {
      const double ratio = *d.new_mean_ns / *d.base_mean_ns;
      if (ratio > most_ratio) {
        most_ratio = ratio;
        gc.grew_most_ratio = d.stage;
      }
    }
  }
  return gc;
}

}  // namespace

Comparison Compare(const Report& base, const Report& next) {
  Comparison c;
  c.base_title = base.title;
  c.new_title = next.title;
  c.base_transport = base.transport;
  c.new_transport = next.transport;
  std::vector<const GroupReport*> used;
  for (const GroupReport& g : base.groups) {
    const GroupReport* other = FindCounterpart(g, next.groups);
    if (!other) {
      c.unmatched_groups.push_back("base only: " + g.name);
      continue;
    }
    used.push_back(other);
    c.groups.push_back(CompareGroup(g, *other));
  }
  for (const GroupReport& g : next.groups) {
    if (std::find(used.begin(), used.end(), &g) == used.end()) {
      c.unmatched_groups.push_back("new only: " + g.name);
    }
  }
  return c;
}

}  // namespace ntprof
