#include "hash_ring.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

using ntprof::common::HashRing;
using ntprof::common::SplitMemberList;
using ntprof::common::StableHash64;

namespace {

std::vector<std::string> Keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("nqn.2026-01.io.ntprof:subsys", i));
  return keys;
}

}  // namespace

TEST_CASE("stable_hash_is_fnv1a_with_a_fixed_finalizer", "[ring]") {
  // Worked out once; any change would move every subsystem of a running fleet to another collector.
  CHECK(StableHash64("") == 0xefd01f60ba992926ull);  // the FNV-1a basis, finalized
  CHECK(StableHash64("collector-a:7420") == StableHash64("collector-a:7420"));
  CHECK(StableHash64("a") != StableHash64("b"));
}

TEST_CASE("a_known_ring_assigns_known_owners", "[ring]") {
  const HashRing ring({"c1:7420", "c2:7420", "c3:7420"});
  std::map<std::string, std::string> owners;
  for (int i = 0; i < 10; ++i) owners[absl::StrCat("nqn.2026-01.io.ntprof:subsys", i)] = "";
  for (auto& [key, owner] : owners) owner = ring.Owner(key);
  const std::map<std::string, std::string> expected = {
      {"nqn.2026-01.io.ntprof:subsys0", "c3:7420"},
      {"nqn.2026-01.io.ntprof:subsys1", "c3:7420"},
      {"nqn.2026-01.io.ntprof:subsys2", "c3:7420"},
      {"nqn.2026-01.io.ntprof:subsys3", "c1:7420"},
      {"nqn.2026-01.io.ntprof:subsys4", "c1:7420"},
      {"nqn.2026-01.io.ntprof:subsys5", "c1:7420"},
      {"nqn.2026-01.io.ntprof:subsys6", "c3:7420"},
      {"nqn.2026-01.io.ntprof:subsys7", "c2:7420"},
      {"nqn.2026-01.io.ntprof:subsys8", "c3:7420"},
      {"nqn.2026-01.io.ntprof:subsys9", "c1:7420"}
  };
  CHECK(owners == expected);
  // The order members are given in and duplicates do not matter.
  const HashRing shuffled({"c3:7420", "c1:7420", "c2:7420", "c1:7420"});
  for (const auto& [key, owner] : owners) CHECK(shuffled.Owner(key) == owner);
}

TEST_CASE("every_member_gets_a_fair_share", "[ring]") {
  const HashRing ring({"a:1", "b:1", "c:1", "d:1"});
  std::map<std::string, int> count;
  for (const auto& k : Keys(20000)) ++count[ring.Owner(k)];
  REQUIRE(count.size() == 4);
  for (const auto& [member, n] : count) {
    INFO(member << " owns " << n);
    CHECK(n > 20000 / 4 * 0.7);
    CHECK(n < 20000 / 4 * 1.3);
  }
}

TEST_CASE("adding_a_member_moves_only_keys_to_it_about_one_in_n_plus_one", "[ring]") {
  const std::vector<std::string> before = {"a:1", "b:1", "c:1", "d:1"};
  std::vector<std::string> after = before;
  after.push_back("e:1");
  const HashRing old_ring(before), new_ring(after);
  int moved = 0;
  const auto keys = Keys(20000);
  for (const auto& k : keys) {
    if (old_ring.Owner(k) == new_ring.Owner(k)) continue;
    ++moved;
    CHECK(new_ring.Owner(k) == "e:1");
  }
  INFO(moved << " of " << keys.size() << " moved");
  CHECK(moved > 20000 / 5 * 0.7);
  CHECK(moved < 20000 / 5 * 1.3);
}

TEST_CASE("removing_a_member_moves_only_its_keys", "[ring]") {
  const HashRing old_ring({"a:1", "b:1", "c:1"}), new_ring({"a:1", "c:1"});
  for (const auto& k : Keys(5000)) {
    if (old_ring.Owner(k) != "b:1") CHECK(new_ring.Owner(k) == old_ring.Owner(k));
    CHECK(new_ring.Owner(k) != "b:1");
  }
}

TEST_CASE("empty_ring_owns_nothing_and_member_lists_split_on_commas", "[ring]") {
  CHECK(HashRing().Owner("x").empty());
  CHECK(HashRing({"only:1"}).Owner("x") == "only:1");
  CHECK(SplitMemberList({"a:1, b:2", "c:3", " ,"}) == std::vector<std::string>{"a:1", "b:2", "c:3"});
}
