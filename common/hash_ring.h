// HashRing: which collector owns a key (a subsystem NQN, or an agent's hostname for records without
// one), by consistent hashing. Every member (a collector's address, as the agents and peers are
// given it) sits at kVirtualNodes points of a 64-bit circle; a key belongs to the member at the
// first point at or after the key's own hash. Adding a member therefore moves only the keys that
// land on its points (about 1/(N+1) of them) and removing one moves only its own.
//
// The hash is 64-bit FNV-1a followed by a murmur-style finalizer: fixed, so every agent and every
// collector process computes the same owner (absl::Hash is seeded per process and cannot be used).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace ntprof::common {

// The fixed 64-bit hash of the ring (stable across processes, builds and machines).
uint64_t StableHash64(std::string_view bytes);

class HashRing {
 public:
  static constexpr int kVirtualNodes = 128;

  HashRing() = default;
  // Duplicates are ignored; the order members are given in does not matter.
  explicit HashRing(std::vector<std::string> members);

  // The member owning key; "" when the ring is empty.
  const std::string& Owner(std::string_view key) const;
  // Sorted, without duplicates.
  const std::vector<std::string>& members() const { return members_; }
  bool empty() const { return members_.empty(); }
  bool Contains(std::string_view member) const;

 private:
  std::vector<std::string> members_;
  std::vector<std::pair<uint64_t, uint32_t>> points_;  // (hash, index into members_), sorted
};

// A member file (ntprofd --ring-file, ntprof-collector --peers-file): addresses separated by
// newlines or commas; '#' starts a comment. NotFound / Unavailable when it cannot be read.
absl::StatusOr<std::vector<std::string>> ReadMemberFile(const std::string& path);

// "a:1,b:2" and repeated flags alike: every comma-separated, trimmed, non-empty entry, in order.
std::vector<std::string> SplitMemberList(const std::vector<std::string>& values);

}  // namespace ntprof::common
