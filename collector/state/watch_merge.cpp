#include "watch_merge.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "interval_summary.h"
#include "stage_model.h"

namespace ntprof::collector {
namespace {

using GroupKey = std::tuple<std::string, std::string, std::string>;  // session, name, scope

GroupKey KeyOf(const v1::WatchGroup& g) { return {g.session(), g.name(), g.scope()}; }

// Sums over the parts of one group, before the means are taken.
struct Combined {
  v1::WatchGroup* out = nullptr;
  int parts = 0;
  uint64_t sampled = 0;
  double operations = 0;   // iops x each part's span
  double latency_sum = 0;  // mean_ns x sampled
  int64_t p99_ns = 0;
  struct StageSums {
    std::string label;
    double mean_sum = 0;   // mean_ns x sampled
    double share_sum = 0;  // share x group mean x sampled: the stage's part of latency_sum
  };
  std::map<std::string, StageSums> stages;  // by stage id
  std::vector<std::string> stage_order;
};

void Add(Combined* c, const v1::WatchGroup& g, double span_s) {
  ++c->parts;
  c->sampled += g.sampled();
  c->operations += g.iops() * span_s;
  c->latency_sum += g.mean_ns() * static_cast<double>(g.sampled());
  c->p99_ns = std::max(c->p99_ns, g.p99_ns());
  for (const v1::WatchStage& st : g.stages()) {
    auto [it, added] = c->stages.try_emplace(st.stage());
    if (added) {
      it->second.label = st.label();
      c->stage_order.push_back(st.stage());
    }
    it->second.mean_sum += st.mean_ns() * static_cast<double>(g.sampled());
    it->second.share_sum += st.share() * g.mean_ns() * static_cast<double>(g.sampled());
  }
}

std::optional<Stage> StageOf(const std::string& id) {
  for (size_t i = 0; i < kStageCount; ++i) {
    if (StageId(static_cast<Stage>(i)) == id) return static_cast<Stage>(i);
  }
  return std::nullopt;
}

// The combined group's numbers and its line (IntervalSummary's format).
void Finish(const Combined& c, double span_s) {
  v1::WatchGroup& g = *c.out;
  const double n = static_cast<double>(c.sampled);
  g.set_sampled(c.sampled);
  g.set_rate_per_s(span_s > 0 ? n / span_s : 0);
  g.set_iops(span_s > 0 ? c.operations / span_s : 0);
  g.set_mean_ns(n > 0 ? c.latency_sum / n : 0);
  g.set_p99_ns(c.p99_ns);
  g.clear_stages();
  GroupReport report;
  report.name = g.name();
  report.latency.n = c.sampled;
  report.latency.mean_ns = g.mean_ns();
  report.latency.p99_ns = c.p99_ns;
  if (g.iops() > 0) report.throughput = Throughput{.iops = g.iops()};
  for (const std::string& id : c.stage_order) {
    const Combined::StageSums& sums = c.stages.at(id);
    v1::WatchStage* st = g.add_stages();
    st->set_stage(id);
    st->set_label(sums.label);
    st->set_mean_ns(n > 0 ? sums.mean_sum / n : 0);
    st->set_share(c.latency_sum > 0 ? sums.share_sum / c.latency_sum : 0);
    if (auto stage = StageOf(id)) {
      StageRow row{.stage = *stage, .label = sums.label};
      row.share = st->share();
      report.stages.push_back(std::move(row));
    }
  }
  g.set_line(absl::StrCat(g.session(), " ", IntervalSummary::Line(report, span_s)));
}

}  // namespace

v1::WatchUpdate MergeWatchUpdates(v1::WatchUpdate local, const std::vector<v1::WatchUpdate>& parts) {
  if (parts.empty()) return local;
  const double span_s = local.interval_s();
  std::map<GroupKey, Combined> groups;
  for (v1::WatchGroup& g : *local.mutable_groups()) {
    Combined& c = groups[KeyOf(g)];
    c.out = &g;
    Add(&c, g, span_s);
  }
  // Pointers into a RepeatedPtrField stay valid as it grows (each element is its own object).
  for (const v1::WatchUpdate& part : parts) {
    for (const v1::WatchGroup& g : part.groups()) {
      Combined& c = groups[KeyOf(g)];
      if (!c.out) {
        c.out = local.add_groups();
        *c.out = g;
      }
      Add(&c, g, part.interval_s());
    }
    for (const std::string& note : part.notes()) local.add_notes(note);
  }
  for (const auto& [key, c] : groups) {
    if (c.parts > 1) Finish(c, span_s);  // a group from one part keeps its numbers and line
  }
  return local;
}

}  // namespace ntprof::collector
