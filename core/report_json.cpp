#include "report_json.h"

#include "loss_counters.h"
#include "report_builder.h"
#include "slowest_commands.h"

namespace ntprof {
namespace {

double Us(double ns) { return ns / 1000.0; }

nlohmann::json DistributionJson(const Distribution& d) {
  return {{"n", d.n},
          {"mean_us", Us(d.mean_ns)},
          {"p50_us", Us(d.p50_ns)},
          {"p99_us", Us(d.p99_ns)},
          {"p99_9_us", Us(d.p999_ns)},
          {"min_us", Us(d.min_ns)},
          {"max_us", Us(d.max_ns)},
          {"negative_n", d.negative}};
}

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json StageIds(const std::vector<StageDelta>& stages) {
  nlohmann::json ids = nlohmann::json::array();
  for (const StageDelta& d : stages) ids.push_back(StageId(d.stage));
  return ids;
}

nlohmann::json GroupJson(const GroupReport& g) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageRow& row : g.stages) {
    nlohmann::json s = DistributionJson(row.dist);
    s["id"] = StageId(row.stage);
    s["label"] = row.label;
    s["share"] = row.share;
    s["avg_qd"] = OptionalNumber(row.avg_qd);
    stages.push_back(std::move(s));
  }
  nlohmann::json components = nlohmann::json::array();
  for (const ComponentRow& row : g.components) {
    nlohmann::json c = DistributionJson(row.dist);
    c["id"] = ComponentId(row.component);
    c["stage"] = StageId(row.stage);
    c["label"] = ComponentLabel(row.component);
    c["avg_qd"] = OptionalNumber(row.avg_qd);
    components.push_back(std::move(c));
  }
  nlohmann::json j = {{"name", g.name},
                      {"op", g.op},
                      {"bytes", g.bytes},
                      {"device", g.device},
                      {"scope", ScopeId(g.scope)},
                      {"latency", DistributionJson(g.latency)},
                      {"io_span_s", g.io_span_s},
                      {"avg_qd_span_s", g.avg_qd_span_s},
                      {"stages", std::move(stages)},
                      {"components", std::move(components)},
                      {"largest", g.largest ? nlohmann::json(StageId(*g.largest)) : nullptr}};
  if (g.throughput) {
    j["throughput"] = {{"device", g.throughput->device},
                       {"direction", g.throughput->direction},
                       {"iops", g.throughput->iops},
                       {"bytes_per_s", g.throughput->bytes_per_s},
                       {"span_s", g.throughput->span_s}};
    if (const auto& e = g.throughput->estimated) {
      j["throughput"]["estimated_from"] = {{"sampled", e->sampled},
                                           {"sample_rate", e->sample_rate},
                                           {"block_counted", e->block_counted}};
    }
  }
  return j;
}

nlohmann::json LossesJson(const v1::LossCounters& l) {
  nlohmann::json j = nlohmann::json::object();
  ForEachLoss(l, [&](const std::string& cause, uint64_t n) {
    if (IsLostRecordCause(cause)) j[cause] = n;
  });
  return j;
}

nlohmann::json SlowestJson(const Report& report) {
  nlohmann::json commands = nlohmann::json::array();
  for (const SlowCommand& c : report.slowest) {
    nlohmann::json stages = nlohmann::json::object();
    for (size_t s = 0; s < kStageCount; ++s) {
      if (c.stages[s]) stages[std::string(StageId(static_cast<Stage>(s)))] = Us(*c.stages[s]);
    }
    commands.push_back(
        {{"start", c.wall_ns ? nlohmann::json(WallTimeText(*c.wall_ns)) : nullptr},
         {"start_wall_ns", c.wall_ns ? nlohmann::json(*c.wall_ns) : nullptr},
         {"host", c.host_agent.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.host_agent)},
         {"target",
          c.target_agent.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.target_agent)},
         {"group", c.group},
         {"device", c.device},
         {"qid", c.qid},
         {"cid", c.cid},
         {"opcode", c.opcode},
         {"op", OpName(c.opcode)},
         {"slba", c.slba},
         {"bytes", c.bytes},
         {"latency_us", Us(c.latency_ns)},
         {"stages", std::move(stages)}});
  }
  return commands;
}

}  // namespace

nlohmann::json ToJson(const Report& report) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupReport& g : report.groups) groups.push_back(GroupJson(g));
  const RecordTally& t = report.records;
  nlohmann::json j = {{"source", report.title},
          {"transport", report.transport},
          {"sample_rate", report.sample_rate},
          {"span_s", report.span_s},
          {"groups", std::move(groups)},
          {"records",
           {{"host", t.host},
            {"target", t.target},
            {"matched", t.matched},
            {"matched_percent", t.matched_percent()},
            {"host_only", t.host_only},
            {"target_only", t.target_only},
            {"host_only_at_edges", t.host_only_at_edges},
            {"target_only_at_edges", t.target_only_at_edges},
            {"refused", t.refused},
            {"incomplete", t.incomplete}}},
          {"losses", LossesJson(report.losses)},
          {"probe_runs_skipped", report.losses.nested_probe_miss()},
          {"socket_table_full", report.losses.socket_table_full()},
          {"notes", report.notes}};
  if (report.slowest_asked > 0) {
    j["slowest_by"] = StageId(SlowestTotal(report));
    j["slowest"] = SlowestJson(report);
  }
  return j;
}

nlohmann::json ToJson(const Comparison& c) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupComparison& g : c.groups) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageDelta& d : g.stages) {
      nlohmann::json s = {{"id", StageId(d.stage)},
                          {"label", d.label},
                          {"base_mean_us", d.base_mean_ns ? nlohmann::json(Us(*d.base_mean_ns)) : nullptr},
                          {"new_mean_us", d.new_mean_ns ? nlohmann::json(Us(*d.new_mean_ns)) : nullptr}};
      if (d.base_mean_ns && d.new_mean_ns) {
        s["diff_us"] = Us(*d.new_mean_ns - *d.base_mean_ns);
        s["ratio"] = *d.base_mean_ns > 0 ? nlohmann::json(*d.new_mean_ns / *d.base_mean_ns) : nullptr;
      }
      stages.push_back(std::move(s));
    }
    groups.push_back({{"name", g.name},
                      {"base_group", g.base_name},
                      {"new_group", g.new_name},
                      {"base_latency", DistributionJson(g.base_latency)},
                      {"new_latency", DistributionJson(g.new_latency)},
                      {"latency_compared", g.latency_compared},
                      {"stages", std::move(stages)},
                      {"not_compared", {{"base_only", StageIds(g.base_only)},
                                        {"new_only", StageIds(g.new_only)}}},
                      {"grew_most", g.grew_most ? nlohmann::json(StageId(*g.grew_most)) : nullptr},
                      {"grew_most_ratio",
                       g.grew_most_ratio ? nlohmann::json(StageId(*g.grew_most_ratio)) : nullptr}});
  }
  return {{"base", {{"source", c.base_title}, {"transport", c.base_transport}}},
          {"new", {{"source", c.new_title}, {"transport", c.new_transport}}},
          {"groups", std::move(groups)},
          {"unmatched_groups", c.unmatched_groups}};
}

}  // namespace ntprof
