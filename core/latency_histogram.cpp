#include "latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ntprof {
namespace {
constexpr unsigned kSubBits = 7;  // 128 sub-buckets per power of two
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
}  // namespace

size_t LatencyHistogram::BucketOf(uint64_t v) {
  if (v < kSub) return static_cast<size_t>(v);
  const unsigned exponent = 63 - static_cast<unsigned>(std::countl_zero(v));  // >= kSubBits
  const uint64_t sub = (v >> (exponent - kSubBits)) & (kSub - 1);
  return static_cast<size_t>((exponent - kSubBits + 1) * kSub + sub);
}

uint64_t LatencyHistogram::BucketLow(size_t bucket) {
  if (bucket < kSub) return bucket;
  const unsigned exponent = static_cast<unsigned>(bucket / kSub) + kSubBits - 1;
  const uint64_t sub = bucket % kSub;
  return (uint64_t{1} << exponent) | (sub << (exponent - kSubBits));
}

uint64_t LatencyHistogram::BucketWidth(size_t bucket) {
  if (bucket < kSub) return 1;
  const unsigned exponent = static_cast<unsigned>(bucket / kSub) + kSubBits - 1;
  return uint64_t{1} << (exponent - kSubBits);
}

void LatencyHistogram::AddToBucket(int64_t ns) {
  if (ns < 0) return;  // kept out of the buckets: percentiles rank them below every bucket
  const size_t bucket = BucketOf(static_cast<uint64_t>(ns));
  if (bucket >= buckets_.size()) buckets_.resize(bucket + 1, 0);
  ++buckets_[bucket];
}

void LatencyHistogram::FillBucketsFromExact() {
  for (int64_t v : exact_) AddToBucket(v);
}

void LatencyHistogram::KeepExact(int64_t ns) {
  if (count_ <= kExactLimit) {
    if (!exact_.empty() && ns < exact_.back()) exact_sorted_ = false;
    exact_.push_back(ns);
    return;
  }
  if (!exact_.empty()) {
    FillBucketsFromExact();
    exact_.clear();  // from now on the buckets answer
    exact_.shrink_to_fit();
  }
  AddToBucket(ns);
}

void LatencyHistogram::Add(int64_t ns) {
  if (count_ == 0) {
    min_ = max_ = ns;
  } else {
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  ++count_;
  sum_ += static_cast<double>(ns);
  if (ns < 0) ++negatives_;
  KeepExact(ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  if (count_ + other.count_ <= kExactLimit) {
    exact_.insert(exact_.end(), other.exact_.begin(), other.exact_.end());
    exact_sorted_ = false;
  } else {
    // Either side may still hold exact values instead of buckets.
    if (count_ <= kExactLimit) FillBucketsFromExact();
    if (other.count_ <= kExactLimit) {
      for (int64_t v : other.exact_) AddToBucket(v);
    } else {
      if (other.buckets_.size() > buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
      for (size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
    }
    exact_.clear();
    exact_.shrink_to_fit();
  }
  count_ += other.count_;
  negatives_ += other.negatives_;
  sum_ += other.sum_;
}

int64_t LatencyHistogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  const double clamped = std::clamp(q, 0.0, 100.0);
  // The small epsilon keeps 99.9 % of 1000 at rank 999 despite floating-point rounding.
  uint64_t rank =
      static_cast<uint64_t>(std::ceil(clamped / 100.0 * static_cast<double>(count_) - 1e-9));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (count_ <= kExactLimit) {
    if (!exact_sorted_) {
      std::sort(exact_.begin(), exact_.end());
      exact_sorted_ = true;
    }
    return exact_[rank - 1];
  }
  if (rank <= negatives_) return min_;
  uint64_t seen = negatives_;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      const int64_t mid = static_cast<int64_t>(BucketLow(b) + BucketWidth(b) / 2);
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace ntprof
