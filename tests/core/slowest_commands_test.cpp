// --slowest N against ground truth: recordings whose every command has known stage durations.
#include <catch2/catch.hpp>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "recording_set.h"
#include "recording_writer.h"
#include "report_of.h"
#include "report_json.h"
#include "report_text.h"
#include "slowest_commands.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

constexpr int kCommands = 500;

// Storage takes 50 us plus a different number of 10 ns steps for every command (a permutation of
// 0..499, so no two end-to-end latencies are equal); the other pieces are fixed.
CommandTiming Known(int i) {
  const uint64_t step = static_cast<uint64_t>((i * 211) % kCommands);
  return {300, 800, 470, 200, 10'000, 200, 300, 50'000 + step * 10, 210, 300};
}

// The stages of command i, worked out from its timing as docs/design.md defines them.
struct Expected {
  int index;
  uint64_t host_block, host_driver, network, target_driver, storage, end_to_end;
};

Expected ExpectedOf(int i) {
  const CommandTiming t = Known(i);
  Expected e{i,
             t.block_submit + t.block_complete,
             t.driver_submit + t.driver_complete,
             t.network,
             t.receive + t.submit + t.respond + t.send,
             t.storage,
             0};
  e.end_to_end = e.host_block + e.host_driver + e.network + e.target_driver + e.storage;
  return e;
}

std::vector<Expected> SlowestByHand(int n) {
  std::vector<Expected> all;
  for (int i = 0; i < kCommands; ++i) all.push_back(ExpectedOf(i));
  std::sort(all.begin(), all.end(),
            [](const Expected& a, const Expected& b) { return a.end_to_end > b.end_to_end; });
  all.resize(n);
  return all;
}

Report SlowestReport(const TempDir& dir, size_t n) {
  const RunSpec spec{.commands = kCommands};
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), spec, Known);
  ReportOptions options;
  options.extras.slowest = n;
  return ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}, options);
}

// Command i's H0 on the host clock is host_mono_start + 1000 + i * gap (recording_writer.h): on
// the wall clock, wall_start + 1000 + i * gap.
int64_t WallOf(int i) {
  const RunSpec spec;
  return static_cast<int64_t>(spec.wall_start_ns + 1000 + static_cast<uint64_t>(i) * spec.gap_ns);
}

}  // namespace

TEST_CASE("slowest_lists_exactly_the_known_slowest_commands_in_order", "[slowest]") {
  TempDir dir;
  const Report report = SlowestReport(dir, 5);
  const std::vector<Expected> expected = SlowestByHand(5);
  REQUIRE(report.slowest.size() == 5);
  for (size_t k = 0; k < expected.size(); ++k) {
    const SlowCommand& c = report.slowest[k];
    const Expected& e = expected[k];
    INFO("rank " << k << ", command " << e.index);
    CHECK(c.latency_ns == static_cast<int64_t>(e.end_to_end));
    CHECK(c.stages[static_cast<size_t>(Stage::kHostBlock)] == static_cast<int64_t>(e.host_block));
    CHECK(c.stages[static_cast<size_t>(Stage::kHostDriver)] == static_cast<int64_t>(e.host_driver));
    CHECK(c.stages[static_cast<size_t>(Stage::kNetwork)] == static_cast<int64_t>(e.network));
    CHECK(c.stages[static_cast<size_t>(Stage::kTargetDriver)] ==
          static_cast<int64_t>(e.target_driver));
    CHECK(c.stages[static_cast<size_t>(Stage::kStorage)] == static_cast<int64_t>(e.storage));
    CHECK(c.cid == static_cast<uint32_t>(e.index % 64));
    CHECK(c.slba == static_cast<uint64_t>(e.index) * 8);
    CHECK(c.qid == 1);
    CHECK(c.opcode == 0x02);
    CHECK(c.bytes == 4096);
    CHECK(c.host_agent == "host");
    CHECK(c.target_agent == "target");
    CHECK(c.wall_ns == WallOf(e.index));
  }
}

TEST_CASE("slowest_text_prints_one_line_per_command_with_every_stage", "[slowest]") {
  TempDir dir;
  const std::string text = RenderText(SlowestReport(dir, 3));
  CHECK_THAT(text, Catch::Contains("slowest 3 of 500 sampled commands"));
  for (const Expected& e : SlowestByHand(3)) {
    const std::string line = absl::StrFormat(
        "  %-26s %-12s %-12s %5d %5d %-6s %12d %8d %10.2f %13.2f %13.2f %13.2f %13.2f %13.2f  "
        "read 4KiB nvme0n1\n",
        WallTimeText(WallOf(e.index)), "host", "target", 1, e.index % 64, "read", e.index * 8, 4096,
        e.end_to_end / 1000.0, e.host_block / 1000.0, e.host_driver / 1000.0, e.network / 1000.0,
        e.target_driver / 1000.0, e.storage / 1000.0);
    CHECK_THAT(text, Catch::Contains(line));
  }
  // The slowest first: its line comes before the next one's.
  const auto expected = SlowestByHand(3);
  const auto at = [&](const Expected& e) {
    return text.find(absl::StrFormat(" %12d %8d %10.2f", e.index * 8, 4096, e.end_to_end / 1000.0));
  };
  CHECK(at(expected[0]) < at(expected[1]));
  CHECK(at(expected[1]) < at(expected[2]));
}

TEST_CASE("slowest_json_holds_the_exact_stage_values", "[slowest]") {
  TempDir dir;
  const nlohmann::json j = ToJson(SlowestReport(dir, 4));
  CHECK(j["slowest_by"] == "end_to_end");
  const std::vector<Expected> expected = SlowestByHand(4);
  REQUIRE(j["slowest"].size() == expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    const auto& c = j["slowest"][k];
    const Expected& e = expected[k];
    CHECK(c["latency_us"].get<double>() == Approx(e.end_to_end / 1000.0).epsilon(1e-12));
    CHECK(c["stages"]["host_block"].get<double>() == Approx(e.host_block / 1000.0).epsilon(1e-12));
    CHECK(c["stages"]["host_driver"].get<double>() == Approx(e.host_driver / 1000.0).epsilon(1e-12));
    CHECK(c["stages"]["network"].get<double>() == Approx(e.network / 1000.0).epsilon(1e-12));
    CHECK(c["stages"]["target_driver"].get<double>() ==
          Approx(e.target_driver / 1000.0).epsilon(1e-12));
    CHECK(c["stages"]["storage"].get<double>() == Approx(e.storage / 1000.0).epsilon(1e-12));
    CHECK(c["cid"] == e.index % 64);
    CHECK(c["slba"] == e.index * 8);
    CHECK(c["op"] == "read");
    CHECK(c["host"] == "host");
    CHECK(c["target"] == "target");
    CHECK(c["start_wall_ns"] == WallOf(e.index));
    CHECK(c["start"] == WallTimeText(WallOf(e.index)));
  }
}

TEST_CASE("report_without_slowest_has_no_slowest_list", "[slowest]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 10}, Known);
  const Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  CHECK(report.slowest.empty());
  CHECK_FALSE(ToJson(report).contains("slowest"));
  CHECK_THAT(RenderText(report), !Catch::Contains("slowest"));
}

TEST_CASE("slowest_commands_keeps_n_and_the_first_of_equals", "[slowest]") {
  SlowestCommands slowest(3);
  // 10,000 commands, latencies 0..9999 in a scrambled order, plus two ties of the largest.
  for (int i = 0; i < 10'000; ++i) {
    SlowCommand c;
    c.latency_ns = (i * 7919) % 10'000;
    c.cid = static_cast<uint32_t>(i);
    slowest.Offer(c);
  }
  SlowCommand tie;
  tie.latency_ns = 9999;
  tie.cid = 777'777;  // offered after the first 9999: ranks after it
  slowest.Offer(tie);
  const std::vector<SlowCommand> kept = slowest.Sorted();
  REQUIRE(kept.size() == 3);
  CHECK(kept[0].latency_ns == 9999);
  CHECK(kept[0].cid != 777'777);
  CHECK(kept[1].latency_ns == 9999);
  CHECK(kept[1].cid == 777'777);
  CHECK(kept[2].latency_ns == 9998);
}

TEST_CASE("slowest_of_a_target_recorded_alone_ranks_by_time_in_target", "[slowest]") {
  TempDir dir;
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = kCommands}, Known);
  ReportOptions options;
  options.extras.slowest = 2;
  const Report report = ReportOf({dir.File("target.ntp")}, options);
  REQUIRE(report.slowest.size() == 2);
  const Expected first = SlowestByHand(1)[0];
  CHECK(report.slowest[0].latency_ns ==
        static_cast<int64_t>(first.target_driver + first.storage));
  CHECK(report.slowest[0].host_agent.empty());
  CHECK(report.slowest[0].target_agent == "target");
  CHECK(ToJson(report)["slowest_by"] == "target_total");
}
