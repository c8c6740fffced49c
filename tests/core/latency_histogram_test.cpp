#include <catch2/catch.hpp>

#include <random>

#include "latency_histogram.h"

using ntprof::LatencyHistogram;

TEST_CASE("histogram_percentiles_are_exact_for_small_series", "[histogram]") {
  LatencyHistogram h;
  for (int v = 1; v <= 1000; ++v) h.Add(v * 1000);  // 1..1000 us
  CHECK(h.count() == 1000);
  CHECK(h.mean() == Approx(500'500.0));
  CHECK(h.Percentile(50) == 500'000);
  CHECK(h.Percentile(99) == 990'000);
  CHECK(h.Percentile(99.9) == 999'000);
  CHECK(h.Percentile(100) == 1'000'000);
  CHECK(h.min() == 1000);
  CHECK(h.max() == 1'000'000);
}

TEST_CASE("histogram_percentiles_stay_within_one_percent_past_the_exact_limit", "[histogram]") {
  LatencyHistogram h;
  std::mt19937_64 rng(5);
  std::vector<int64_t> values;
  for (size_t i = 0; i < LatencyHistogram::kExactLimit * 3; ++i) {
    const int64_t v = 1000 + static_cast<int64_t>(rng() % 5'000'000);
    values.push_back(v);
    h.Add(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {50.0, 90.0, 99.0, 99.9}) {
    const auto exact = values[static_cast<size_t>(std::ceil(q / 100 * values.size())) - 1];
    CHECK(static_cast<double>(h.Percentile(q)) == Approx(static_cast<double>(exact)).epsilon(0.01));
  }
}

TEST_CASE("histogram_merge_equals_adding_everything_to_one", "[histogram]") {
  LatencyHistogram a, b, all;
  for (int v = 0; v < 500; ++v) {
    a.Add(v * 7);
    all.Add(v * 7);
    b.Add(v * 13 + 1);
    all.Add(v * 13 + 1);
  }
  a.Merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.mean() == Approx(all.mean()));
  CHECK(a.Percentile(50) == all.Percentile(50));
  CHECK(a.Percentile(99) == all.Percentile(99));
}

TEST_CASE("histogram_ranks_negative_durations_first", "[histogram]") {
  LatencyHistogram h;
  h.Add(-50);
  h.Add(100);
  h.Add(200);
  CHECK(h.negatives() == 1);
  CHECK(h.Percentile(1) == -50);
  CHECK(h.mean() == Approx(250.0 / 3));
}

// The buckets are filled only when a series passes the exact limit, from the values kept until
// then: whether a series got there by Add or by Merge (from either side's exact values or
// buckets), its percentiles are the same.
TEST_CASE("histogram_passing_the_exact_limit_by_merge_equals_adding_everything_to_one",
          "[histogram]") {
  std::mt19937_64 rng(11);
  for (size_t left : {size_t{10}, LatencyHistogram::kExactLimit - 5, LatencyHistogram::kExactLimit + 7}) {
    for (size_t right : {size_t{20}, LatencyHistogram::kExactLimit + 3}) {
      LatencyHistogram a, b, all;
      for (size_t i = 0; i < left + right; ++i) {
        const int64_t v = static_cast<int64_t>(rng() % 3'000'000) - 1000;  // a few negatives
        (i < left ? a : b).Add(v);
        all.Add(v);
      }
      a.Merge(b);
      CHECK(a.count() == all.count());
      CHECK(a.negatives() == all.negatives());
      for (double q : {0.01, 1.0, 50.0, 99.0, 99.9, 100.0}) CHECK(a.Percentile(q) == all.Percentile(q));
    }
  }
}
