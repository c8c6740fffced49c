// Durations in nanoseconds. Percentiles are exact while a series holds up to kExactLimit values
// (most reports); beyond that they come from a log-linear histogram: exact below 128 ns, then 128
// sub-buckets per power of two (relative error under 0.8 %), bounded memory whatever the count.
// Mean, min and max are always exact. The buckets are filled only once a series passes
// kExactLimit (from the values kept so far): an agent's interval summary holds a few sampled
// commands per histogram, and zeroing ~10 KiB of buckets for each was most of its work per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ntprof {

class LatencyHistogram {
 public:
  static constexpr size_t kExactLimit = 65536;

  void Add(int64_t ns);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  double sum() const { return sum_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  uint64_t negatives() const { return negatives_; }
  // Nearest-rank percentile (q in [0, 100]); the bucket's midpoint, clamped to [min, max].
  int64_t Percentile(double q) const;

 private:
  void KeepExact(int64_t ns);
  // The series passed kExactLimit: the buckets take over from the exact values (kept as they are).
  void FillBucketsFromExact();
  void AddToBucket(int64_t ns);
  static size_t BucketOf(uint64_t v);
  static uint64_t BucketLow(size_t bucket);
  static uint64_t BucketWidth(size_t bucket);

  std::vector<uint64_t> buckets_;  // only while count_ > kExactLimit
  mutable std::vector<int64_t> exact_;  // every value while count_ <= kExactLimit
  mutable bool exact_sorted_ = true;
  uint64_t count_ = 0;
  uint64_t negatives_ = 0;  // counted in the mean and ranks, in no bucket
  double sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
};

}  // namespace ntprof
