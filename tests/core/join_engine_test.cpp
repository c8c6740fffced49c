#include <catch2/catch.hpp>

#include "join_engine.h"
#include "record_factory.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

struct Outcomes {
  std::vector<std::pair<v1::Record, v1::Record>> joined;
  std::vector<v1::Record> host_only;
  std::vector<v1::Record> target_only;
  JoinEngine::Sink Sink() {
    return [this](const v1::Record* h, const v1::Record* t) {
      if (h && t) {
        joined.emplace_back(*h, *t);
      } else if (h) {
        host_only.push_back(*h);
      } else {
        target_only.push_back(*t);
      }
    };
  }
};

v1::Record Host(CommandId id, uint64_t h0) {
  return MakeRecord(v1::ROLE_HOST, id, HostStamps(h0, 1, 1, 100, 1, 1), "nvme0n1");
}
v1::Record Target(CommandId id, uint64_t t0) {
  return MakeRecord(v1::ROLE_TARGET, id, TargetStamps(t0, 1, 1, 10, 1, 1), "nullb0");
}

}  // namespace

TEST_CASE("join_matches_halves_arriving_in_either_order", "[join]") {
  Outcomes out;
  JoinEngine join({}, out.Sink());
  CommandId a{.cid = 5, .slba = 100};
  CommandId b{.cid = 6, .slba = 200};
  join.Add(Host(a, 1000), 1);
  join.Add(Target(b, 9000), 2);  // target first for b
  join.Add(Target(a, 8000), 3);
  join.Add(Host(b, 2000), 4);
  join.Flush();  // two pairs of one queue wait for a third to agree (join_timing_test.cpp)
  REQUIRE(out.joined.size() == 2);
  CHECK(out.joined[0].first.slba() == 100);
  CHECK(out.joined[0].second.slba() == 100);
  CHECK(out.joined[1].first.slba() == 200);
  CHECK(out.joined[1].second.slba() == 200);
  CHECK(join.stats().matched_percent() == Approx(100.0));
  CHECK(join.pending() == 0);
}

TEST_CASE("join_matches_reused_cid_in_order", "[join]") {
  Outcomes out;
  JoinEngine join({}, out.Sink());
  // The same (qid, cid) carries three commands; the host's records all arrive before the target's.
  for (uint64_t lba : {10u, 20u, 30u}) join.Add(Host({.cid = 7, .slba = lba}, lba), int64_t(lba));
  for (uint64_t lba : {10u, 20u, 30u}) join.Add(Target({.cid = 7, .slba = lba}, lba), 40 + int64_t(lba));
  REQUIRE(out.joined.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(out.joined[i].first.slba() == out.joined[i].second.slba());
    CHECK(out.joined[i].first.slba() == 10 * (i + 1));
  }
}

TEST_CASE("join_keeps_controllers_apart_across_a_reconnect", "[join]") {
  Outcomes out;
  JoinEngine join({}, out.Sink());
  // Reconnect: same qid/cid, new cntlid. The old controller's target half never arrives.
  join.Add(Host({.cntlid = 1, .cid = 3, .slba = 1}, 1), 1);
  join.Add(Host({.cntlid = 2, .cid = 3, .slba = 2}, 2), 2);
  join.Add(Target({.cntlid = 2, .cid = 3, .slba = 2}, 5), 3);
  join.Flush();
  REQUIRE(out.joined.size() == 1);
  CHECK(out.joined[0].first.cntlid() == 2);
  REQUIRE(out.host_only.size() == 1);
  CHECK(out.host_only[0].cntlid() == 1);
  CHECK(join.stats().host_only == 1);
  CHECK(join.stats().matched_percent() == Approx(50.0));
}

TEST_CASE("join_keeps_subsystems_apart", "[join]") {
  Outcomes out;
  JoinEngine join({}, out.Sink());
  join.Add(Host({.nqn = "nqn.a", .cid = 1, .slba = 1}, 1), 1);
  join.Add(Target({.nqn = "nqn.b", .cid = 1, .slba = 1}, 1), 2);
  CHECK(out.joined.empty());
  join.Flush();
  CHECK(out.host_only.size() == 1);
  CHECK(out.target_only.size() == 1);
}

TEST_CASE("join_counts_halves_that_wait_past_the_window", "[join]") {
  Outcomes out;
  JoinEngine join({.window_ns = 1'000}, out.Sink());
  join.Add(Host({.cid = 1, .slba = 1}, 1), 0);
  join.Add(Target({.cid = 2, .slba = 2}, 1), 500);
  join.Expire(1'200);  // the host half waited 1,200 > 1,000
  CHECK(out.host_only.size() == 1);
  CHECK(out.target_only.empty());
  join.Expire(1'600);
  CHECK(out.target_only.size() == 1);
  // A half that arrives after its partner expired does not join with anything else.
  join.Add(Target({.cid = 1, .slba = 1}, 9), 1'700);
  join.Flush();
  CHECK(out.joined.empty());
  CHECK(join.stats().target_only == 2);
}

TEST_CASE("join_drops_the_older_half_when_a_side_lost_a_record", "[join]") {
  Outcomes out;
  JoinEngine join({}, out.Sink());
  // The host lost the record of the command at lba 10 (say, its ring buffer was full).
  join.Add(Target({.cid = 4, .slba = 10}, 1), 1);
  join.Add(Target({.cid = 4, .slba = 20}, 2), 2);
  join.Add(Host({.cid = 4, .slba = 20}, 3), 3);
  join.Flush();
  REQUIRE(out.joined.size() == 1);
  CHECK(out.joined[0].first.slba() == 20);
  CHECK(out.target_only.size() == 1);
  CHECK(out.target_only[0].slba() == 10);
  CHECK(join.stats().identity_mismatch == 1);
}

TEST_CASE("join_memory_stays_bounded_when_a_side_never_arrives", "[join]") {
  Outcomes out;
  JoinEngine join({.max_pending = 100}, out.Sink());
  for (uint32_t i = 0; i < 1000; ++i) join.Add(Host({.cid = i, .slba = i}, i), i);
  CHECK(join.pending() == 100);
  CHECK(join.stats().evicted_for_memory == 900);
  CHECK(out.host_only.size() == 900);
}
