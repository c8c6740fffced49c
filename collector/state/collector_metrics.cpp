#include "collector_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loss_counters.h"
#include "report_builder.h"
#include "stage_model.h"

namespace ntprof::collector {
namespace {

// Upper bounds in seconds: 1 us .. 1 s, enough resolution for NVMe latencies.
constexpr std::array<double, 16> kBounds = {1e-6,   2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6,
                                            500e-6, 1e-3, 2e-3, 5e-3,  10e-3, 50e-3, 200e-3, 1.0};

// Every family gets HELP and TYPE lines: `promtool check metrics` (and the linters of most
// scrapers) reject a family without HELP.
struct MetricInfo {
  const char* name;
  const char* help;
};

constexpr std::array<MetricInfo, static_cast<size_t>(Counter::kCount)> kCounterInfo = {{
    {"ntprof_collector_batches_total", "Record batches stored"},
    {"ntprof_collector_records_total", "Records stored"},
    {"ntprof_collector_duplicate_messages_total",
     "Agent messages discarded as already held (replays)"},
    {"ntprof_collector_sequence_lost_total",
     "Agent sequence numbers declared lost (spool overflow)"},
    {"ntprof_collector_records_rejected_total", "Records refused for impossible stamps"},
    {"ntprof_collector_unknown_session_total",
     "Agent messages for sessions the collector does not know"},
    {"ntprof_collector_bad_agent_messages_total", "Agent stream protocol violations"},
    {"ntprof_collector_requests_rejected_total", "Client requests refused (bad input)"},
    {"ntprof_collector_watch_updates_dropped_total", "Watch updates dropped for slow clients"},
    {"ntprof_collector_join_matched_total", "Live join: host and target halves joined"},
    {"ntprof_collector_join_host_only_total", "Live join: host halves left unmatched"},
    {"ntprof_collector_join_target_only_total", "Live join: target halves left unmatched"},
    {"ntprof_collector_store_errors_total", "Batches that could not be written to disk"},
    {"ntprof_collector_clickhouse_rows_total", "Command rows ClickHouse accepted"},
    {"ntprof_collector_clickhouse_rows_dropped_total",
     "Command rows given up because the ClickHouse queue was full (a restart reloads them)"},
    {"ntprof_collector_clickhouse_insert_failures_total",
     "Inserts ClickHouse did not accept (retried)"},
}};

constexpr std::array<MetricInfo, static_cast<size_t>(Gauge::kCount)> kGaugeInfo = {{
    {"ntprof_collector_sessions_running", "Sessions currently recording"},
    {"ntprof_collector_agents_connected", "Agents with an open record stream"},
    {"ntprof_collector_join_pending", "Record halves the live join holds for their other half"},
    {"ntprof_collector_watch_clients", "Clients currently watching"},
    {"ntprof_collector_clickhouse_queued_rows", "Command rows waiting for ClickHouse"},
}};

void AppendFamilyHeader(std::string* out, const MetricInfo& info, const char* type) {
  absl::StrAppend(out, "# HELP ", info.name, " ", info.help, "\n# TYPE ", info.name, " ", type,
                  "\n");
}

}  // namespace

void CollectorMetrics::AddAgentLosses(const v1::LossCounters& delta) {
  std::lock_guard lock(mu_);
  AddLosses(delta, &losses_);
}

void CollectorMetrics::ObserveCommand(const std::string& session, const v1::Record* host,
                                      const v1::Record* target) {
  auto breakdown = BreakDown(host, target);
  if (!breakdown) return;
  const v1::Record& identity = host ? *host : *target;
  const std::string op = OpName(identity.opcode());
  const std::string role = host && target ? "joined" : host ? "host" : "target";
  std::lock_guard lock(mu_);
  for (size_t s = 0; s < kStageCount; ++s) {
    if (!breakdown->stages[s]) continue;
    const double seconds = static_cast<double>(*breakdown->stages[s]) / 1e9;
    Histogram& h = stages_[{session, std::string(StageId(static_cast<Stage>(s))), op, role}];
    size_t b = 0;
    while (b < kBuckets && seconds > kBounds[b]) ++b;
    if (b < kBuckets) ++h.counts[b];
    ++h.count;
    h.sum_s += seconds;
  }
}

void CollectorMetrics::SetGauge(Gauge gauge, double value) {
  std::lock_guard lock(mu_);
  gauges_[static_cast<size_t>(gauge)] = value;
}

std::string CollectorMetrics::RenderPrometheus() const {
  std::string out;
  for (size_t i = 0; i < kCounterInfo.size(); ++i) {
    AppendFamilyHeader(&out, kCounterInfo[i], "counter");
    absl::StrAppend(&out, kCounterInfo[i].name, " ", counters_[i].load(std::memory_order_relaxed),
                    "\n");
  }
  std::lock_guard lock(mu_);
  AppendFamilyHeader(&out, {"ntprof_agent_lost_records_total", "Records agents lost, per cause"},
                     "counter");
  ForEachLoss(losses_, [&](const std::string& cause, uint64_t value) {
    absl::StrAppend(&out, "ntprof_agent_lost_records_total{cause=\"", cause, "\"} ", value, "\n");
  });
  for (size_t i = 0; i < kGaugeInfo.size(); ++i) {
    AppendFamilyHeader(&out, kGaugeInfo[i], "gauge");
    absl::StrAppend(&out, kGaugeInfo[i].name, " ", gauges_[i], "\n");
  }
  AppendFamilyHeader(&out, {"ntprof_stage_latency_seconds", "Sampled command time per stage"},
                     "histogram");
  for (const auto& [key, h] : stages_) {
    const auto& [session, stage, op, role] = key;
    const std::string labels = absl::StrFormat(
        "session=\"%s\",stage=\"%s\",op=\"%s\",role=\"%s\"", session, stage, op, role);
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      cumulative += h.counts[b];
      absl::StrAppend(&out, "ntprof_stage_latency_seconds_bucket{", labels,
                      absl::StrFormat(",le=\"%g\"} ", kBounds[b]), cumulative, "\n");
    }
    absl::StrAppend(&out, "ntprof_stage_latency_seconds_bucket{", labels, ",le=\"+Inf\"} ", h.count,
                    "\n", "ntprof_stage_latency_seconds_sum{", labels, "} ",
                    absl::StrFormat("%.9f", h.sum_s), "\n", "ntprof_stage_latency_seconds_count{",
                    labels, "} ", h.count, "\n");
  }
  return out;
}

}  // namespace ntprof::collector
