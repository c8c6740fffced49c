// One line per group for each interval of a live recording ("every 10 s, per group: sampled
// commands, rate, latency, and each stage's share"): what `ntprofd record` prints while it runs
// and what `ntprofctl watch` shows for a cluster.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report.h"
#include "report_builder.h"

namespace ntprof {

class IntervalSummary {
 public:
  // scope: known up front by an agent (its role's side alone); otherwise the first record of each
  // interval decides it.
  explicit IntervalSummary(uint32_t sample_rate, std::optional<Scope> scope = std::nullopt)
      : sample_rate_(sample_rate), scope_(scope) {}

  // A joined pair, or one half recorded alone.
  void Add(const v1::Record* host, const v1::Record* target);
  void AddCounters(const v1::DeviceCounters& counters);
  // Every record of one agent's batch (each a half, by its role) and its device counters.
  void AddBatch(const v1::RecordBatch& batch);

  // The interval's report, then a fresh interval begins.
  Report Take(int64_t interval_ns);

  // The interval's lines, e.g.
  //   read 4KiB nvme0n1: 743 sampled (74.3/s) | mean 1290.12 us p99 3100.00 us | host block 1 % ...
  static std::vector<std::string> Lines(const Report& interval);
  // One group's line over an interval of span_s seconds (0: no rate).
  static std::string Line(const GroupReport& group, double span_s);

 private:
  ReportBuilder& BuilderFor(Scope scope);

  uint32_t sample_rate_;
  std::optional<Scope> scope_;
  std::unique_ptr<ReportBuilder> builder_;
  std::vector<v1::DeviceCounters> counters_;
  std::vector<v1::Record> local_before_scope_;  // local devices' commands before the scope is known
};

}  // namespace ntprof
