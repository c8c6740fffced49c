#include "sample_statistic.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace ntprof {

std::string Statistic::Name() const {
  if (kind == Kind::kMean) return "mean";
  return absl::StrFormat("p%g", percentile);
}

uint64_t Statistic::Rank(uint64_t n) const {
  // The same epsilon as LatencyHistogram::Percentile: 99.9 % of 1000 is rank 999.
  const auto rank =
      static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(n) - 1e-9));
  return std::clamp<uint64_t>(rank, 1, n);
}

double StatisticOf(const std::vector<int64_t>& sorted, Statistic statistic) {
  if (statistic.kind == Statistic::Kind::kPercentile) {
    return static_cast<double>(sorted[statistic.Rank(sorted.size()) - 1]);
  }
  double sum = 0;
  for (int64_t v : sorted) sum += static_cast<double>(v);
  return sum / static_cast<double>(sorted.size());
}

}  // namespace ntprof
