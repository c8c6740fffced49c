#include "stage_timeline.h"

#include <algorithm>

namespace ntprof {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

void StageTimeline::Add(int64_t start_ns, const CommandBreakdown& breakdown, Stage total) {
  if (bins_.empty()) {
    origin_ns_ = start_ns;
    first_ns_ = start_ns;
  }
  first_ns_ = std::min(first_ns_, start_ns);
  Bin& bin = bins_[FloorDiv(start_ns - origin_ns_, width_ns_)];
  ++bin.n;
  for (size_t s = 0; s < kStageCount; ++s) {
    if (!breakdown.stages[s]) continue;
    bin.sum[s] += static_cast<double>(*breakdown.stages[s]);
    ++bin.count[s];
  }
  if (auto t = breakdown.stage(total)) bin.max_ns = std::max(bin.max_ns, *t);
  while (bins_.size() > kMaxBins) Widen();
}

void StageTimeline::Widen() {
  std::map<int64_t, Bin> wider;
  for (const auto& [index, bin] : bins_) {
    Bin& w = wider[FloorDiv(index, 2)];
    w.n += bin.n;
    for (size_t s = 0; s < kStageCount; ++s) {
      w.sum[s] += bin.sum[s];
      w.count[s] += bin.count[s];
    }
    w.max_ns = std::max(w.max_ns, bin.max_ns);
  }
  bins_ = std::move(wider);
  width_ns_ *= 2;
}

std::vector<TimelineBin> StageTimeline::Bins(int64_t origin_ns) const {
  std::vector<TimelineBin> out;
  for (const auto& [index, bin] : bins_) {
    TimelineBin t;
    t.start_s = static_cast<double>(origin_ns_ + index * width_ns_ - origin_ns) / 1e9;
    t.n = bin.n;
    for (size_t s = 0; s < kStageCount; ++s) {
      if (bin.count[s] > 0) t.mean_ns[s] = bin.sum[s] / static_cast<double>(bin.count[s]);
    }
    t.max_ns = bin.max_ns;
    out.push_back(t);
  }
  return out;
}

}  // namespace ntprof
