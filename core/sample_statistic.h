// A statistic of per-command latencies that the regression gate bounds: the mean or a percentile,
// computed the way reports compute them (nearest rank), so a gate's figures match the report's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ntprof {

struct Statistic {
  enum class Kind : uint8_t { kMean, kPercentile };
  Kind kind = Kind::kMean;
  double percentile = 0;  // 0 < q < 100, for kPercentile

  static Statistic Mean() { return {}; }
  static Statistic Percentile(double q) { return {Kind::kPercentile, q}; }
  // "mean", "p99", "p99.9": the grammar's spelling.
  std::string Name() const;
  // The percentile's nearest rank among n values (1-based), as LatencyHistogram::Percentile.
  uint64_t Rank(uint64_t n) const;
};

// The statistic of `sorted` (ascending, not empty).
double StatisticOf(const std::vector<int64_t>& sorted, Statistic statistic);

}  // namespace ntprof
