// Test helpers shared by the report tests: the tutorial's stage timings and the report of a set of
// recordings (failing the test when they cannot be read).
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "recording_set.h"
#include "recording_writer.h"

namespace ntprof::testing {

// The tutorial's Linux NVMe/RDMA figures: host block 0.50, host driver 1.27, network 10.00,
// target driver 1.01, storage 60.00 us; end to end 72.78 us. Storage and network alternate around
// their means so the percentiles have something to show:
//   e2e = 2.78 + {50, 70} + {5, 15} us -> 57.78, 67.78, 77.78, 87.78 us, a quarter each.
inline CommandTiming Tutorial(int i) {
  const uint64_t storage = i % 2 == 0 ? 50'000 : 70'000;
  const uint64_t network = (i / 2) % 2 == 0 ? 5'000 : 15'000;
  return {300, 800, 470, 200, network, 200, 300, storage, 210, 300};
}

inline Report ReportOf(const std::vector<std::string>& paths, ReportOptions options = {}) {
  auto set = RecordingSet::Open(paths, options);
  REQUIRE(set.ok());
  auto report = set->BuildReport();
  REQUIRE(report.ok());
  return *report;
}

}  // namespace ntprof::testing
