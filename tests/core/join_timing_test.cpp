// The join refuses pairs whose stamps cannot be one command (core/pair_timing.h), against known
// commands: a simulated QD1 queue whose every command has the same cid (SPDK) over a namespace of
// sixteen 128 KiB blocks, recorded on both sides with one side starting or stopping earlier.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "join_engine.h"
#include "record_factory.h"
#include "report_json.h"
#include "report_text.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

constexpr uint64_t kUs = 1000;
// The target's clock reads the host's plus this: never used by the join, only by the simulation.
constexpr uint64_t kTargetClockAhead = 7'000'000'123'456;

struct Command {
  uint64_t slba;
  std::vector<uint64_t> host;
  std::vector<uint64_t> target;
  // A user-space half's stamps as recorded sit this much later than the truth (pair_timing.h);
  // its record still leaves the machine when the command completes.
  uint64_t host_late = 0;
  uint64_t target_late = 0;
};

std::vector<uint64_t> Late(std::vector<uint64_t> stamps, uint64_t late) {
  for (uint64_t& stamp : stamps) stamp += stamp ? late : 0;
  return stamps;
}

// n back-to-back commands of one queue at QD1: each is sent after the previous one completed.
std::vector<Command> QueueAtQd1(size_t n, std::mt19937_64* rng) {
  auto between = [rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(*rng);
  };
  std::vector<Command> out;
  uint64_t now = 1'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    Command c;
    c.slba = 256 * between(0, 15);
    const uint64_t h2 = now + 5 * kUs;
    const uint64_t t0 = h2 + between(15, 60) * kUs + kTargetClockAhead;  // the capsule crosses
    c.target = TargetStamps(t0, 0, 4 * kUs, between(30, 900) * kUs, 0, 6 * kUs);
    const uint64_t t5 = c.target[NTPROF_T5_REPLY_SENT];
    const uint64_t h3 = t5 - kTargetClockAhead + between(15, 60) * kUs;  // the reply crosses
    c.host = HostStamps(now, 2 * kUs, 3 * kUs, h3 - h2, 3 * kUs, 2 * kUs);
    now = c.host[NTPROF_H5_BLOCK_DONE] + between(1, 20) * kUs;
    out.push_back(std::move(c));
  }
  return out;
}

struct Outcome {
  size_t right = 0;
  size_t wrong = 0;
  size_t host_only = 0;
  size_t target_only = 0;
  JoinStats stats;
};

// Records the host's commands [host_from, host_to) and the target's [target_from, target_to),
// merged as a report merges files: on each machine's approximate wall clock (the target's off by
// target_wall_error_ns), and joins them.
Outcome Join(const std::vector<Command>& commands, size_t host_from, size_t host_to,
             size_t target_from, size_t target_to, int64_t target_wall_error_ns,
             v1::Stack stack = v1::STACK_KERNEL) {
  struct Arrival {
    int64_t at;
    v1::Record record;
  };
  std::vector<Arrival> arrivals;
  std::map<uint64_t, size_t> host_index;  // H2 -> command: the ground truth of a pair
  std::map<uint64_t, size_t> target_index;
  for (size_t i = 0; i < commands.size(); ++i) {
    const Command& c = commands[i];
    const CommandId id{.cid = 0, .slba = c.slba, .nlb = 255, .bytes = 128 << 10};
    if (i >= host_from && i < host_to) {
      arrivals.push_back({static_cast<int64_t>(c.host[NTPROF_H0_BLOCK_START]),
                          MakeRecord(v1::ROLE_HOST, id, Late(c.host, c.host_late), "nvme0n1")});
      arrivals.back().record.set_stack(stack);
      host_index[c.host[NTPROF_H2_CAPSULE_SENT] + c.host_late] = i;
    }
    if (i >= target_from && i < target_to) {
      arrivals.push_back({static_cast<int64_t>(c.target[NTPROF_T0_CAPSULE_RECEIVED] -
                                               kTargetClockAhead) + target_wall_error_ns,
                          MakeRecord(v1::ROLE_TARGET, id, Late(c.target, c.target_late), "nullb0")});
      arrivals.back().record.set_stack(stack);
      target_index[c.target[NTPROF_T0_CAPSULE_RECEIVED] + c.target_late] = i;
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  Outcome out;
  JoinEngine join({}, [&](const v1::Record* h, const v1::Record* t) {
    if (h && t) {
      const bool same = host_index.at(h->stamps(NTPROF_H2_CAPSULE_SENT)) ==
                        target_index.at(t->stamps(NTPROF_T0_CAPSULE_RECEIVED));
      ++(same ? out.right : out.wrong);
    } else {
      ++(h ? out.host_only : out.target_only);
    }
  });
  for (Arrival& a : arrivals) {
    join.Add(std::move(a.record), a.at);
    join.Expire(a.at);
  }
  join.Flush();
  out.stats = join.stats();
  return out;
}

}  // namespace

TEST_CASE("qd1_random_io_on_a_small_namespace_with_staggered_starts_pairs_no_two_commands",
          "[join]") {
  std::mt19937_64 rng(41);
  size_t wrong = 0;
  size_t right = 0;
  size_t both_sides = 0;
  uint64_t refused = 0;
  for (int run = 0; run < 200; ++run) {
    INFO("run " << run);
    const size_t n = 40;
    const std::vector<Command> commands = QueueAtQd1(n, &rng);
    const size_t late = 1 + run % 4;  // how many commands the later side missed
    const int64_t wall_error = (run % 2 ? 1 : -1) * static_cast<int64_t>(300 * kUs);
    // Even runs: the target starts later; odd runs: the host does. Each side also stops early
    // once in a while, so the end of a recording is covered too.
    const bool target_late = run % 2 == 0;
    const size_t host_to = run % 3 == 0 ? n - 2 : n;
    const size_t target_to = run % 5 == 0 ? n - 3 : n;
    const Outcome o = target_late ? Join(commands, 0, host_to, late, target_to, wall_error)
                                  : Join(commands, late, host_to, 0, target_to, wall_error);
    const size_t overlap = std::min(host_to, target_to) - late;
    CHECK(o.wrong == 0);
    // At most the edge's few pairs are lost (those formed before enough agreed), never the rest
    // of the queue.
    CHECK(o.right + 2 * kConfirmingPairs >= overlap);
    CHECK(o.right + o.wrong == o.stats.matched);
    wrong += o.wrong;
    right += o.right;
    both_sides += overlap;
    refused += o.stats.refused;
  }
  CHECK(wrong == 0);
  CHECK(refused > 0);  // the edges did offer wrong pairs: the check is exercised
  CHECK(right >= both_sides * 98 / 100);  // 7,201 of 7,274 when written
}

// SPDK on both sides: each command's stamps placed late by up to 5 ms (its thread preempted
// between the application's clock read and the BPF program's, pair_timing.h), which moves the
// pairs' offset from command to command. Seen in CI: 4 of 3,052 real SPDK pairs refused, single
// commands off by 1.6-4.2 ms beside a build.
TEST_CASE("user_space_halves_whose_stamps_sit_late_by_a_preemption_still_join", "[join]") {
  std::mt19937_64 rng(7);
  std::vector<Command> commands = QueueAtQd1(2000, &rng);
  std::uniform_int_distribution<uint64_t> late(0, 5000 * kUs);
  for (Command& c : commands) {
    c.host_late = late(rng);
    c.target_late = late(rng);
  }
  const Outcome spdk = Join(commands, 0, commands.size(), 0, commands.size(), 0, v1::STACK_SPDK);
  CHECK(spdk.wrong == 0);
  CHECK(spdk.stats.refused == 0);
  CHECK(spdk.right == commands.size());
  // The same stamps from the kernel, whose stamps are exact: these offsets cannot be one pair's.
  const Outcome kernel = Join(commands, 0, commands.size(), 0, commands.size(), 0);
  CHECK(kernel.stats.refused > 0);
}

TEST_CASE("a_pair_whose_target_span_outlasts_the_hosts_h2_to_h3_is_refused_and_counted",
          "[join]") {
  std::vector<std::pair<bool, bool>> out;  // (host, target) of each outcome
  JoinEngine join({}, [&](const v1::Record* h, const v1::Record* t) { out.emplace_back(h, t); });
  const CommandId id{.cid = 0, .slba = 8};
  // Host: H2..H3 = 100 us. Target: T0..T5 = 150 us: not one command, whatever the clocks.
  join.Add(MakeRecord(v1::ROLE_HOST, id, HostStamps(1'000'000, 1, 1, 100 * kUs, 1, 1), "n"), 1);
  join.Add(MakeRecord(v1::ROLE_TARGET, id, TargetStamps(5'000'000, 0, 0, 150 * kUs, 0, 0), "b"),
           2);
  join.Flush();
  CHECK(join.stats().refused == 1);
  CHECK(join.stats().matched == 0);
  CHECK(join.stats().host_only == 1);
  CHECK(join.stats().target_only == 1);
  CHECK(out.size() == 2);
}

TEST_CASE("a_queues_first_pairs_wait_for_agreement_or_the_window_and_then_go_joined",
          "[join]") {
  size_t joined = 0;
  JoinEngine join({.window_ns = 1000}, [&](const v1::Record* h, const v1::Record* t) {
    if (h && t) ++joined;
  });
  const CommandId id{.cid = 0, .slba = 8};
  join.Add(MakeRecord(v1::ROLE_HOST, id, HostStamps(1'000'000, 1, 1, 100 * kUs, 1, 1), "n"), 1);
  join.Add(MakeRecord(v1::ROLE_TARGET, id, TargetStamps(5'000'000, 0, 0, 50 * kUs, 0, 0), "b"), 2);
  CHECK(joined == 0);  // held: nothing yet says the clocks allow it
  CHECK(join.pending() == 2);
  join.Expire(500);
  CHECK(joined == 0);
  join.Expire(2000);  // the window ended and nothing disagreed
  CHECK(joined == 1);
  CHECK(join.pending() == 0);
  CHECK(join.stats().refused == 0);
}

TEST_CASE("refused_pairs_reach_the_records_line_and_json", "[join][report]") {
  Report report;
  report.records.host = 10;
  report.records.target = 10;
  report.records.matched = 8;
  report.records.host_only = 2;
  report.records.target_only = 2;
  report.records.refused = 2;
  const std::vector<std::string> lines = RecordLines(report);
  REQUIRE(!lines.empty());
  CHECK_THAT(lines[0], Catch::Contains("2 pair(s) of one command id and LBA refused"));
  CHECK(ToJson(report)["records"]["refused"] == 2);
}
