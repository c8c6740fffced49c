#include "command_samples.h"

namespace ntprof {

void CommandSamples::Add(const CommandBreakdown& breakdown) {
  for (size_t s = 0; s < kStageCount; ++s) {
    if (breakdown.stages[s]) Offer(&stages_[s], *breakdown.stages[s]);
  }
  for (size_t c = 0; c < kComponentCount; ++c) {
    if (breakdown.components[c]) Offer(&components_[c], *breakdown.components[c]);
  }
}

// Algorithm R: the i-th value replaces a kept one with probability capacity / i.
void CommandSamples::Offer(Series* series, int64_t ns) {
  ++series->seen;
  if (series->kept.size() < capacity_) {
    series->kept.push_back(ns);
    return;
  }
  const uint64_t slot = rng_() % series->seen;
  if (slot < capacity_) series->kept[slot] = ns;
}

}  // namespace ntprof
