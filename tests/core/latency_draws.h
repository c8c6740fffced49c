// Per-command latencies drawn from a known distribution, for the regression gate's tests against
// ground truth: a log-normal storage time (median 50 us, shape 0.3: a realistic right tail) whose
// every quantile a `scale` multiplies, so a run drawn with scale 1.15 has a true p99 (and mean, and
// median) exactly 15 % above one drawn with scale 1.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ntprof::testing {

inline constexpr double kMedianStorageNs = 50'000;
inline constexpr double kStorageShape = 0.3;

class StorageDraws {
 public:
  explicit StorageDraws(uint64_t seed) : rng_(seed) {}
  // Box-Muller from the engine's raw output: the same values on every standard library.
  int64_t Next(double scale = 1) {
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return static_cast<int64_t>(std::llround(scale * kMedianStorageNs * std::exp(kStorageShape * z)));
  }
  std::vector<int64_t> Take(size_t n, double scale = 1) {
    std::vector<int64_t> out(n);
    for (int64_t& v : out) v = Next(scale);
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace ntprof::testing
