// One group's stage latency over time: the mean of each stage per interval, so a transient shows
// where it happened. Memory is bounded: when the commands span more than kMaxBins intervals, the
// interval doubles and neighbours merge.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "report.h"
#include "stage_model.h"

namespace ntprof {

class StageTimeline {
 public:
  static constexpr size_t kMaxBins = 200;
  static constexpr int64_t kFirstWidthNs = 10'000'000;  // 10 ms, doubled as the run grows

  // start_ns: when the command started, on one clock shared by every command of the report.
  void Add(int64_t start_ns, const CommandBreakdown& breakdown, Stage total);

  bool empty() const { return bins_.empty(); }
  int64_t first_ns() const { return first_ns_; }
  int64_t width_ns() const { return width_ns_; }
  // Bins in time order; start_s counted from origin_ns (the report's first command).
  std::vector<TimelineBin> Bins(int64_t origin_ns) const;

 private:
  struct Bin {
    uint64_t n = 0;
    std::array<double, kStageCount> sum{};
    std::array<uint64_t, kStageCount> count{};
    int64_t max_ns = 0;
  };
  void Widen();

  int64_t origin_ns_ = 0;  // the first command's start: bin 0 begins there
  int64_t first_ns_ = 0;   // the earliest start seen
  int64_t width_ns_ = kFirstWidthNs;
  std::map<int64_t, Bin> bins_;  // by index: floor((start - origin) / width)
};

}  // namespace ntprof
