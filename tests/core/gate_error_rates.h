// How often the regression gate says "crossed" over many independent pairs of runs drawn from
// known distributions (latency_draws.h): the false-alarm rate when both runs come from the same
// distribution, the detection rate when NEW's is shifted. Each pair goes through the gate's own
// decision (ApplyGate on two reports), as `ntprofctl compare --fail-if` would decide it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "command_samples.h"
#include "comparison.h"
#include "latency_draws.h"
#include "regression_gate.h"

namespace ntprof::testing {

// A report of one group whose commands' storage stage took `storage` (ns) each.
inline Report StorageRun(const std::vector<int64_t>& storage) {
  auto samples = std::make_shared<CommandSamples>(storage.size());
  for (int64_t ns : storage) {
    CommandBreakdown b;
    b.stages[static_cast<size_t>(Stage::kStorage)] = ns;
    samples->Add(b);
  }
  Report report;
  GroupReport g;
  g.name = "read 4KiB nvme0n1";
  g.op = "read";
  g.bytes = 4096;
  g.samples = samples;
  report.groups.push_back(std::move(g));
  return report;
}

struct CrossingRate {
  int draws = 0;
  int crossed = 0;
  double rate() const { return draws == 0 ? 0 : static_cast<double>(crossed) / draws; }
};

// `draws` pairs of runs of n commands each, NEW's storage scaled by `scale`, against `bound`.
inline CrossingRate MeasureCrossings(const std::string& bound_text, double scale, size_t n,
                                     int draws, const BootstrapOptions& options = {},
                                     uint64_t seed = 1) {
  auto bound = ParseRegressionBound(bound_text);
  CrossingRate rate;
  for (int d = 0; d < draws; ++d) {
    StorageDraws base_draws(seed * 1'000'003 + 2 * d), next_draws(seed * 1'000'003 + 2 * d + 1);
    const Report base = StorageRun(base_draws.Take(n));
    const Report next = StorageRun(next_draws.Take(n, scale));
    // The gate's fixed seed, as the command line uses it: the draws differ, the resampling code not.
    const GateResult result = ApplyGate(base, next, Compare(base, next), {*bound}, options);
    ++rate.draws;
    if (result.crossed()) ++rate.crossed;
  }
  return rate;
}

}  // namespace ntprof::testing
