// The per-command values of one group's stages and components, kept for the regression gate's
// bootstrap (a report's histograms cannot be resampled command by command). Every value is kept
// up to `capacity` per series; beyond that a uniform random subset of `capacity` (reservoir
// sampling, seeded: the same files keep the same subset), so memory stays bounded and the
// interval is that of `capacity` commands: wider than all of them would give, never narrower.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "stage_model.h"

namespace ntprof {

class CommandSamples {
 public:
  explicit CommandSamples(size_t capacity) : capacity_(capacity) {}

  void Add(const CommandBreakdown& breakdown);

  const std::vector<int64_t>& StageValues(Stage s) const {
    return stages_[static_cast<size_t>(s)].kept;
  }
  const std::vector<int64_t>& ComponentValues(Component c) const {
    return components_[static_cast<size_t>(c)].kept;
  }
  // How many values the series was offered (kept or not).
  uint64_t StageSeen(Stage s) const { return stages_[static_cast<size_t>(s)].seen; }
  uint64_t ComponentSeen(Component c) const {
    return components_[static_cast<size_t>(c)].seen;
  }

 private:
  struct Series {
    std::vector<int64_t> kept;
    uint64_t seen = 0;
  };
  void Offer(Series* series, int64_t ns);

  size_t capacity_;
  std::mt19937_64 rng_{0x6e7470726f66};  // "ntprof"
  std::array<Series, kStageCount> stages_;
  std::array<Series, kComponentCount> components_;
};

}  // namespace ntprof
