#include "hash_ring.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"

namespace ntprof::common {

uint64_t StableHash64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;  // FNV prime
  }
  // FNV-1a alone spreads short, similar keys ("nqn...:sub1", "nqn...:sub2") poorly over the high
  // bits; the finalizer of MurmurHash3 mixes every input bit into every output bit.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

HashRing::HashRing(std::vector<std::string> members) : members_(std::move(members)) {
  std::sort(members_.begin(), members_.end());
  members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
  points_.reserve(members_.size() * kVirtualNodes);
  for (uint32_t m = 0; m < members_.size(); ++m) {
    for (int v = 0; v < kVirtualNodes; ++v)
      points_.emplace_back(StableHash64(absl::StrCat(members_[m], "#", v)), m);
  }
  std::sort(points_.begin(), points_.end());
}

const std::string& HashRing::Owner(std::string_view key) const {
  static const std::string kNone;
  if (points_.empty()) return kNone;
  const uint64_t h = StableHash64(key);
  auto it = std::lower_bound(points_.begin(), points_.end(), std::make_pair(h, uint32_t{0}));
  if (it == points_.end()) it = points_.begin();  // the circle wraps
  return members_[it->second];
}

bool HashRing::Contains(std::string_view member) const {
  return std::binary_search(members_.begin(), members_.end(), member);
}

std::vector<std::string> SplitMemberList(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      part = absl::StripAsciiWhitespace(part);
      if (!part.empty()) out.emplace_back(part);
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ReadMemberFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    lines.push_back(line);
  }
  if (in.bad()) return absl::UnavailableError(absl::StrCat("error reading ", path));
  return SplitMemberList(lines);
}

}  // namespace ntprof::common
