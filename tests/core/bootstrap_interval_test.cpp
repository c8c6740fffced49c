#include <catch2/catch.hpp>

#include "bootstrap_interval.h"
#include "latency_draws.h"
#include "latency_histogram.h"

using namespace ntprof;
using namespace ntprof::testing;

TEST_CASE("gate_statistics_are_the_reports_statistics", "[gate]") {
  // The gate's figures must be the ones the report prints: nearest rank, as LatencyHistogram.
  StorageDraws draws(7);
  for (size_t n : {1, 2, 10, 999, 1000, 1001, 5000}) {
    std::vector<int64_t> values = draws.Take(n);
    LatencyHistogram h;
    for (int64_t v : values) h.Add(v);
    std::sort(values.begin(), values.end());
    for (double q : {1.0, 50.0, 90.0, 99.0, 99.9}) {
      INFO("n " << n << " p" << q);
      CHECK(StatisticOf(values, Statistic::Percentile(q)) == h.Percentile(q));
    }
    CHECK(StatisticOf(values, Statistic::Mean()) == Approx(h.mean()));
  }
}

TEST_CASE("bootstrap_interval_is_reproducible_and_holds_a_known_shift", "[gate]") {
  StorageDraws draws(11);
  const std::vector<int64_t> base = draws.Take(4000);
  std::vector<int64_t> next = base;
  for (int64_t& v : next) v += 2'000;  // every command exactly 2 us slower
  BootstrapOptions options;
  const ChangeInterval mean = BootstrapChange(base, next, Statistic::Mean(), false, options);
  CHECK(mean.change == Approx(2'000));
  CHECK(mean.low < 2'000);
  CHECK(mean.high > 2'000);
  const ChangeInterval again = BootstrapChange(base, next, Statistic::Mean(), false, options);
  CHECK(again.low == mean.low);  // the seed makes it the same interval, bit for bit
  CHECK(again.high == mean.high);
  options.seed = 2;
  const ChangeInterval other = BootstrapChange(base, next, Statistic::Mean(), false, options);
  CHECK(other.low != mean.low);

  // Relative: p99 of x and of 1.15 x, the same commands: +15 %, inside its interval.
  std::vector<int64_t> scaled = base;
  for (int64_t& v : scaled) v = v * 115 / 100;
  const ChangeInterval p99 =
      BootstrapChange(base, scaled, Statistic::Percentile(99), true, BootstrapOptions{});
  CHECK(p99.change == Approx(0.15).margin(0.0001));
  CHECK(p99.low < p99.change);
  CHECK(p99.high > p99.change);
}

TEST_CASE("bootstrap_interval_narrows_as_the_runs_grow", "[gate]") {
  // The standard error of a statistic falls as 1/sqrt(n): 16 times the commands, a quarter the
  // width (within the resampling's own noise).
  StorageDraws draws(3);
  const auto width = [&](size_t n) {
    const ChangeInterval c = BootstrapChange(draws.Take(n), draws.Take(n), Statistic::Percentile(90),
                                             true, BootstrapOptions{});
    return c.high - c.low;
  };
  const double small = width(1000);
  const double large = width(16000);
  CHECK(large / small == Approx(0.25).margin(0.08));
}
