#include "bootstrap_interval.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace ntprof {
namespace {

// A uniform index below n from one 64-bit draw (Lemire's multiply-shift): unlike
// std::uniform_int_distribution, the same on every standard library, so intervals are too.
size_t IndexBelow(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// One resample of `sorted` (with replacement, the same size) and its statistic. Percentiles count
// how often each value was drawn and walk the counts to the rank, from the nearer end.
class Resampler {
 public:
  Resampler(const std::vector<int64_t>& sorted, Statistic statistic)
      : sorted_(sorted), statistic_(statistic), counts_(sorted.size()) {}

  double Draw(std::mt19937_64& rng) {
    const size_t n = sorted_.size();
    if (statistic_.kind == Statistic::Kind::kMean) {
      double sum = 0;
      for (size_t i = 0; i < n; ++i) sum += static_cast<double>(sorted_[IndexBelow(rng, n)]);
      return sum / static_cast<double>(n);
    }
    std::fill(counts_.begin(), counts_.end(), 0);
    for (size_t i = 0; i < n; ++i) ++counts_[IndexBelow(rng, n)];
    const uint64_t rank = statistic_.Rank(n);
    if (rank <= n / 2) {
      uint64_t seen = 0;
      for (size_t i = 0; i < n; ++i) {
        seen += counts_[i];
        if (seen >= rank) return static_cast<double>(sorted_[i]);
      }
    } else {
      const uint64_t from_top = n - rank + 1;  // the rank-th smallest is the from_top-th largest
      uint64_t seen = 0;
      for (size_t i = n; i-- > 0;) {
        seen += counts_[i];
        if (seen >= from_top) return static_cast<double>(sorted_[i]);
      }
    }
    return static_cast<double>(sorted_.back());
  }

 private:
  const std::vector<int64_t>& sorted_;
  Statistic statistic_;
  std::vector<uint32_t> counts_;
};

double ChangeOf(double base, double next, bool relative) {
  return relative ? next / base - 1 : next - base;
}

// The q-quantile (0..1) of sorted replicates, interpolated between neighbours.
double QuantileOf(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(at));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

}  // namespace

ChangeInterval BootstrapChange(std::vector<int64_t> base, std::vector<int64_t> next,
                               Statistic statistic, bool relative, const BootstrapOptions& options) {
  std::sort(base.begin(), base.end());
  std::sort(next.begin(), next.end());
  ChangeInterval out;
  out.base = StatisticOf(base, statistic);
  out.next = StatisticOf(next, statistic);
  out.change = ChangeOf(out.base, out.next, relative);
  std::mt19937_64 rng(options.seed);
  Resampler base_resampler(base, statistic), next_resampler(next, statistic);
  std::vector<double> changes;
  changes.reserve(static_cast<size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r) {
    const double b = base_resampler.Draw(rng);
    const double n = next_resampler.Draw(rng);
    // A resample of a mostly-zero stage can have a zero statistic: no relative change to count.
    if (relative && b <= 0) continue;
    changes.push_back(ChangeOf(b, n, relative));
  }
  if (changes.empty()) {
    out.low = out.high = out.change;
    return out;
  }
  std::sort(changes.begin(), changes.end());
  const double tail = (1 - options.confidence) / 2;
  out.low = QuantileOf(changes, tail);
  out.high = QuantileOf(changes, 1 - tail);
  return out;
}

}  // namespace ntprof
