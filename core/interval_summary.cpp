#include "interval_summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ntprof {

ReportBuilder& IntervalSummary::BuilderFor(Scope scope) {
  // The first record of an interval decides its scope: one agent sees one side, a collector
  // summarizes joined pairs; halves of another scope are left out of that interval's stages.
  if (!builder_) builder_ = std::make_unique<ReportBuilder>(scope);
  return *builder_;
}

void IntervalSummary::Add(const v1::Record* host, const v1::Record* target) {
  if (scope_) {  // no record needs to wait for the first that decides
    BuilderFor(*scope_).Add(host, target);
    return;
  }
  const Scope scope = host && target ? Scope::kJoined : host ? Scope::kHostOnly : Scope::kTargetOnly;
  // A local device's command fits any scope (ReportBuilder): it does not decide the interval's.
  if (!builder_ && scope == Scope::kHostOnly && host->transport() == v1::TRANSPORT_LOCAL) {
    local_before_scope_.push_back(*host);
    return;
  }
  const bool deciding = !builder_;
  ReportBuilder& builder = BuilderFor(scope);
  if (deciding) {
    for (const v1::Record& local : local_before_scope_) builder.Add(&local, nullptr);
    local_before_scope_.clear();
  }
  builder.Add(host, target);
}

void IntervalSummary::AddCounters(const v1::DeviceCounters& counters) {
  counters_.push_back(counters);
}

void IntervalSummary::AddBatch(const v1::RecordBatch& batch) {
  for (const v1::Record& r : batch.records()) {
    Add(r.role() == v1::ROLE_HOST ? &r : nullptr, r.role() == v1::ROLE_TARGET ? &r : nullptr);
  }
  for (const v1::DeviceCounters& c : batch.counters()) AddCounters(c);
}

Report IntervalSummary::Take(int64_t interval_ns) {
  if (!builder_ && !local_before_scope_.empty()) {
    ReportBuilder& builder = BuilderFor(Scope::kHostOnly);
    for (const v1::Record& local : local_before_scope_) builder.Add(&local, nullptr);
    local_before_scope_.clear();
  }
  if (!builder_) {
    counters_.clear();
    return Report{};
  }
  for (const auto& c : counters_) builder_->AddCounters(c);
  Report report = builder_->Build(sample_rate_, interval_ns, nullptr);
  builder_.reset();
  counters_.clear();
  return report;
}

std::vector<std::string> IntervalSummary::Lines(const Report& interval) {
  std::vector<std::string> lines;
  for (const GroupReport& g : interval.groups) lines.push_back(Line(g, interval.span_s));
  return lines;
}

std::string IntervalSummary::Line(const GroupReport& g, double span_s) {
  std::string line = absl::StrFormat("%s: %d sampled", g.name, g.latency.n);
  if (span_s > 0) absl::StrAppend(&line, absl::StrFormat(" (%.1f/s)", g.latency.n / span_s));
  if (g.throughput) absl::StrAppend(&line, absl::StrFormat(", %.0f IOPS", g.throughput->iops));
  absl::StrAppend(&line, absl::StrFormat(" | mean %.2f us p99 %.2f us |", g.latency.mean_ns / 1000,
                                         g.latency.p99_ns / 1000.0));
  for (const StageRow& row : g.stages) {
    if (row.stage == Stage::kEndToEnd || row.stage == Stage::kTargetTotal) continue;
    absl::StrAppend(&line, absl::StrFormat(" %s %.0f %%", row.label, row.share * 100));
  }
  return line;
}

}  // namespace ntprof
