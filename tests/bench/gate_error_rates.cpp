// The regression gate's false-alarm and detection rates over many independent pairs of runs drawn
// from a known distribution (tests/core/latency_draws.h), for docs/ci-labs.md: printed, not
// asserted (the [gate] tests of core_tests assert them on fewer draws).
//   gate_error_rates [DRAWS]     (default 1000; the 20,000-command rows use DRAWS / 5)
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"
#include "gate_error_rates.h"

using namespace ntprof;
using namespace ntprof::testing;

int main(int argc, char** argv) {
  const int draws = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (draws <= 0) {
    std::cerr << "usage: gate_error_rates [DRAWS]\n";
    return 2;
  }
  struct Row {
    const char* bound;
    double scale;
    size_t n;
  };
  const Row rows[] = {
      {"storage.p99 > +0%", 1.00, 2'000},   {"storage.mean > +0%", 1.00, 2'000},
      {"storage.p50 > +0%", 1.00, 2'000},   {"storage.p99 > +10%", 1.00, 2'000},
      {"storage.p99 > +10%", 1.05, 2'000},  {"storage.p99 > +10%", 1.15, 2'000},
      {"storage.p99 > +10%", 1.25, 2'000},  {"storage.p99 > +0%", 1.00, 20'000},
      {"storage.p99 > +10%", 1.00, 20'000}, {"storage.p99 > +10%", 1.05, 20'000},
      {"storage.p99 > +10%", 1.15, 20'000}, {"storage.mean > +10%", 1.15, 20'000},
  };
  std::cout << absl::StrFormat("%-22s %9s %8s %7s %9s %7s\n", "bound", "true", "commands", "draws",
                               "crossed", "rate");
  for (const Row& row : rows) {
    const int n_draws = row.n >= 20'000 ? std::max(1, draws / 5) : draws;
    const CrossingRate rate = MeasureCrossings(row.bound, row.scale, row.n, n_draws);
    std::cout << absl::StrFormat("%-22s %+8.0f%% %8d %7d %9d %6.1f%%\n", row.bound,
                                 (row.scale - 1) * 100, row.n, rate.draws, rate.crossed,
                                 rate.rate() * 100);
    std::cout.flush();
  }
  return 0;
}
