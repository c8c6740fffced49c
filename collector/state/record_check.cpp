#include "record_check.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ntprof_record.h"

namespace ntprof::collector {
namespace {

// No NVMe command takes this long; a larger span means corrupt stamps.
constexpr uint64_t kMaxCommandSpanNs = 3600ull * 1'000'000'000ull;

}  // namespace

std::optional<std::string> ImpossibleRecord(const v1::Record& r) {
  if (r.role() != v1::ROLE_HOST && r.role() != v1::ROLE_TARGET) return "no role";
  const int max_stamps = r.role() == v1::ROLE_HOST ? static_cast<int>(NTPROF_HOST_STAMPS)
                                                   : static_cast<int>(NTPROF_TARGET_STAMPS);
  if (r.stamps_size() > max_stamps) {
    return absl::StrCat(r.stamps_size(), " stamps, at most ", max_stamps, " for its role");
  }
  // The six main boundaries (H0..H5 / T0..T5) happen in this order on one clock.
  uint64_t previous = 0;
  uint64_t lowest = UINT64_MAX;
  uint64_t highest = 0;
  for (int i = 0; i < r.stamps_size(); ++i) {
    const uint64_t s = r.stamps(i);
    if (s == 0) continue;
    lowest = std::min(lowest, s);
    highest = std::max(highest, s);
    if (i <= 5) {
      if (s < previous) return absl::StrCat("stamp ", i, " is earlier than the boundary before it");
      previous = s;
    }
  }
  if (highest != 0 && highest - lowest > kMaxCommandSpanNs) return "stamps span more than an hour";
  return std::nullopt;
}

}  // namespace ntprof::collector
