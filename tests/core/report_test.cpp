#include <catch2/catch.hpp>

#include "comparison.h"
#include "interval_summary.h"
#include "recording_set.h"
#include "report_builder.h"
#include "recording_writer.h"
#include "report_of.h"
#include "report_json.h"
#include "report_text.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::testing;

TEST_CASE("golden_report_of_the_tutorial_rdma_figures", "[report]") {
  TempDir dir;
  // 1,000 sampled commands, 1 in 10, 1 ms apart in a recording of exactly 1 s of host clock: they
  // ran from the first H0 to the last H5, 999 ms + that command's 87.78 us.
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 1000}, Tutorial);
  Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  // Shares by hand: 0.50/72.78 = 0.7 %, 1.27/72.78 = 1.7 %, 10/72.78 = 13.7 %, 1.01/72.78 = 1.4 %,
  // 60/72.78 = 82.4 %. Avg QD (Little): 10 x 1000 x mean / 0.999 s, e.g. storage 10 x 1000 x 60 us
  // / 0.999 s = 0.60.
  // p50 is the 500th of 1,000 sorted latencies (67.78), p99 the 990th and p99.9 the 999th (87.78).
  const std::string expected =
      "read 4KiB nvme0n1  (host + target, 1000 sampled, 1 in 10, 1.0 s recorded; avg QD over the 1.0 s "
      "the group had I/O)\n"
      "  latency (us): mean 72.78  p50 67.78  p99 87.78  p99.9 87.78\n"
      "  stage                                   mean us    share   avg QD\n"
      "  host block layer                           0.50    0.7 %     0.01  ▎\n"
      "  host driver                                1.27    1.7 %     0.01  ▌\n"
      "  network                                   10.00   13.7 %     0.10  ████▏\n"
      "  target driver                              1.01    1.4 %     0.01  ▍\n"
      "  storage                                   60.00   82.4 %     0.60  ████████████████████████▊\n"
      "  end to end                                72.78  100.0 %     0.73  \n"
      "  largest: storage (60.00 us), 82 % of the latency\n"
      "\n"
      "records: 1000 host, 1000 target; 1000 matched (100.0 % of the host's)\n";
  CHECK(RenderText(report) == expected);
}

TEST_CASE("report_detail_lists_components_under_their_stage", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 100}, Tutorial);
  const std::string text = RenderText(ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}),
                                      TextOptions{.detail = true});
  CHECK_THAT(text, Catch::Contains("block layer submit (H0-H1)                      100       0.30"));
  CHECK_THAT(text, Catch::Contains("capsule received to request init (T0-T1)        100       0.20"));
  CHECK_THAT(text, Catch::Contains("wire and network stacks                         100      10.00"));
}

TEST_CASE("report_json_uses_the_stable_stage_ids", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 1000}, Tutorial);
  auto j = ToJson(ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}));
  REQUIRE(j["groups"].size() == 1);
  const auto& g = j["groups"][0];
  CHECK(g["name"] == "read 4KiB nvme0n1");
  CHECK(g["scope"] == "joined");
  CHECK(g["largest"] == "storage");
  std::vector<std::string> ids;
  for (const auto& s : g["stages"]) ids.push_back(s["id"]);
  CHECK(ids == std::vector<std::string>{"host_block", "host_driver", "network", "target_driver",
                                        "storage", "end_to_end"});
  CHECK(g["stages"][4]["mean_us"].get<double>() == Approx(60.0));
  CHECK(g["stages"][4]["avg_qd"].get<double>() == Approx(10 * 1000 * 60e-6 / 0.999'087'780));
  CHECK(j["records"]["matched_percent"].get<double>() == Approx(100.0));
}

TEST_CASE("report_of_a_host_file_alone_shows_network_and_target_unrecorded", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), "", RunSpec{.commands = 100}, Tutorial);
  const std::string text = RenderText(ReportOf({dir.File("host.ntp")}));
  CHECK_THAT(text, Catch::Contains("network and target (not recorded)         71.01"));
  CHECK_THAT(text, Catch::Contains("records: 100 host, no target recording"));
}

TEST_CASE("report_of_a_target_file_alone_shows_the_target_stages", "[report]") {
  TempDir dir;
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 100}, Tutorial);
  const std::string text = RenderText(ReportOf({dir.File("target.ntp")}));
  CHECK_THAT(text, Catch::Contains("read 4KiB nullb0  (target only"));
  CHECK_THAT(text, Catch::Contains("storage                                      60.00"));
  CHECK_THAT(text, Catch::Contains("in target (T0-T5)                            61.01"));
}

TEST_CASE("report_counts_host_records_whose_target_half_is_missing", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), "", RunSpec{.commands = 100}, Tutorial);
  // The target recorded only the first 80 commands.
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 80}, Tutorial);
  Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  CHECK(report.records.matched == 80);
  CHECK(report.records.host_only == 20);
  CHECK(report.records.matched_percent() == Approx(80.0));
  CHECK_THAT(RenderText(report), Catch::Contains("80 matched (80.0 % of the host's); unmatched: 20 host"));
  // All 20 come after the target's last command: the target stopped early, nothing was lost.
  CHECK(report.records.host_only_at_edges == 20);
  CHECK_THAT(RenderText(report), Catch::Contains("(20 host, 0 target at the recording's edges"));
}

TEST_CASE("unmatched_halves_between_matched_commands_are_losses_not_edges", "[report]") {
  TempDir dir;
  // The target started 10 commands late, and command 50's target half is another command's (its
  // record of command 50 was lost): 10 host halves at the edge, 1 host and 1 target half inside.
  WriteRun(dir.File("host.ntp"), "", RunSpec{.commands = 100}, Tutorial);
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 100}, Tutorial, [](int i) {
    return CommandId{.cid = static_cast<uint32_t>(i % 64),
                     .slba = i == 50 ? 999'999u : static_cast<uint64_t>(i) * 8};
  });
  Report all = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  REQUIRE(all.records.host_only == 1);
  CHECK(all.records.host_only_at_edges == 0);
  CHECK(all.records.target_only_at_edges == 0);

  TempDir late;
  WriteRun(late.File("host.ntp"), "", RunSpec{.commands = 100}, Tutorial);
  WriteRun("", late.File("target.ntp"), RunSpec{.commands = 90}, Tutorial, [](int i) {
    const int command = i + 10;  // the target's first record is the host's 11th command
    return CommandId{.cid = static_cast<uint32_t>(command % 64),
                     .slba = static_cast<uint64_t>(command) * 8};
  });
  Report report = ReportOf({late.File("host.ntp"), late.File("target.ntp")});
  CHECK(report.records.matched == 90);
  CHECK(report.records.host_only == 10);
  CHECK(report.records.host_only_at_edges == 10);
}

TEST_CASE("recordings_of_different_sample_rates_salts_or_runs_are_refused", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), "", RunSpec{.sample_rate = 10}, Tutorial);
  WriteRun("", dir.File("rate.ntp"), RunSpec{.sample_rate = 100}, Tutorial);
  WriteRun("", dir.File("salt.ntp"), RunSpec{.salt = 7}, Tutorial);
  WriteRun("", dir.File("session.ntp"), RunSpec{.session = "other"}, Tutorial);
  WriteRun("", dir.File("later.ntp"),
           RunSpec{.wall_start_ns = RunSpec{}.wall_start_ns + 3600'000'000'000ull}, Tutorial);
  auto error = [&](const std::string& other) {
    auto set = RecordingSet::Open({dir.File("host.ntp"), dir.File(other)});
    if (!set.ok()) return std::string(set.status().message());
    auto report = set->BuildReport();
    return report.ok() ? std::string() : std::string(report.status().message());
  };
  CHECK_THAT(error("rate.ntp"), Catch::Contains("1 in 100") && Catch::Contains("same -s"));
  CHECK_THAT(error("salt.ntp"), Catch::Contains("same --salt"));
  CHECK_THAT(error("session.ntp"), Catch::Contains("unrelated runs"));
  CHECK_THAT(error("later.ntp"), Catch::Contains("no overlap"));
}

TEST_CASE("compare_names_the_stage_that_grew_most", "[compare]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "base");
  std::filesystem::create_directories(dir.path() / "slow");
  WriteRun(dir.File("base/host.ntp"), dir.File("base/target.ntp"), RunSpec{}, Tutorial);
  // The new run: the drive is 40 us slower and the network 2 us slower.
  WriteRun(dir.File("slow/host.ntp"), dir.File("slow/target.ntp"), RunSpec{}, [](int i) {
    CommandTiming t = Tutorial(i);
    t.storage += 40'000;
    t.network += 2'000;
    return t;
  });
  auto base_files = ExpandRecordingArgs({dir.File("base")});
  auto slow_files = ExpandRecordingArgs({dir.File("slow")});
  REQUIRE(base_files.ok());
  REQUIRE(slow_files.ok());
  Comparison c = Compare(ReportOf(*base_files), ReportOf(*slow_files));
  REQUIRE(c.groups.size() == 1);
  REQUIRE(c.groups[0].grew_most.has_value());
  CHECK(*c.groups[0].grew_most == Stage::kStorage);
  CHECK(*c.groups[0].grew_most_ratio == Stage::kStorage);  // 100/60 > 12/10
  const std::string text = RenderText(c);
  CHECK_THAT(text, Catch::Contains("grew most: storage, +40.00 us (1.67x)"));
  CHECK_THAT(text, Catch::Contains("network                                   10.00      12.00      +2.00    1.20x"));
  CHECK_THAT(text, Catch::Contains("end to end                                72.78     114.78     +42.00    1.58x"));
}

TEST_CASE("throughput_and_avg_qd_are_over_the_span_the_group_had_io", "[report]") {
  TempDir dir;
  // 1,000 sampled reads 1 ms apart (10,000 reads on the device, 1 in 10), then 9 s of nothing
  // before the recording stops: the I/O ran from the first H0 to the last H5 = 999 ms + that
  // command's 87.78 us.
  const RunSpec spec{.commands = 1000, .span_ns = 10'000'000'000, .device_counters = true};
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), spec, Tutorial);
  Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  REQUIRE(report.groups.size() == 1);
  const GroupReport& g = report.groups[0];
  const double io_span_s = 0.999'087'780;
  REQUIRE(g.throughput.has_value());
  CHECK(g.throughput->iops == Approx(10'000 / io_span_s));
  CHECK(g.throughput->bytes_per_s == Approx(10'000 * 4096 / io_span_s));
  // Little's law over the same span: 10 x 1000 x 60 us of storage / 0.999 s.
  const StageRow& storage = g.stages[4];
  REQUIRE(storage.stage == Stage::kStorage);
  CHECK(*storage.avg_qd == Approx(10 * 1000 * 60e-6 / io_span_s));
  const std::string text = RenderText(report);
  CHECK_THAT(text, Catch::Contains(
      "(host + target, 1000 sampled, 1 in 10, 10.0 s recorded; avg QD over the 1.0 s the group had I/O)"));
  CHECK_THAT(text, Catch::Contains(
      "throughput (all reads on nvme0n1, over the 1.0 s they had I/O): 10009 IOPS, 39.1 MiB/s"));
  auto j = ToJson(report);
  CHECK(j["span_s"].get<double>() == Approx(10.0));
  CHECK(j["groups"][0]["io_span_s"].get<double>() == Approx(io_span_s));
  CHECK(j["groups"][0]["throughput"]["span_s"].get<double>() == Approx(io_span_s));
}

TEST_CASE("target_only_report_takes_the_io_span_on_the_target_clock", "[report]") {
  TempDir dir;
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 1000, .span_ns = 10'000'000'000}, Tutorial);
  Report report = ReportOf({dir.File("target.ntp")});
  REQUIRE(report.groups.size() == 1);
  // First T0 to the last T5: 999 ms + the last command's 71.01 us in the target.
  const double io_span_s = 0.999'071'010;
  CHECK(report.groups[0].io_span_s == Approx(io_span_s));
  const StageRow& storage = report.groups[0].stages[1];
  REQUIRE(storage.stage == Stage::kStorage);
  CHECK(*storage.avg_qd == Approx(10 * 1000 * 60e-6 / io_span_s));
}

TEST_CASE("io_span_never_mixes_the_clocks_of_two_hosts", "[report]") {
  // Two hosts with the same device name, their monotonic clocks 6,000 s apart: host a reads for
  // 9 ms, host b for 18 ms (plus the last command's 72.78 us each). Their spans cannot be placed
  // on one time line, so the group's is the longer one, not "6,000 s".
  ReportBuilder builder(Scope::kHostOnly);
  auto add = [&](const std::string& agent, uint64_t clock, uint64_t gap) {
    for (int i = 0; i < 10; ++i) {
      v1::Record r = MakeRecord(v1::ROLE_HOST, {.cid = static_cast<uint32_t>(i)},
                                HostStamps(clock + i * gap, 300, 800, 71'010, 470, 200), "nvme0n1");
      r.set_agent(agent);
      builder.Add(&r, nullptr);
    }
  };
  add("a", 1'000'000'000, 1'000'000);
  add("b", 7'000'000'000'000, 2'000'000);
  v1::DeviceCounters counters;
  counters.set_device("nvme0n1");
  counters.set_reads(20);
  builder.AddCounters(counters);
  Report report = builder.Build(1, 60'000'000'000, nullptr, RateSpan::kIo);
  REQUIRE(report.groups.size() == 1);
  REQUIRE(report.groups[0].throughput.has_value());
  CHECK(report.groups[0].throughput->iops == Approx(20 / 0.018'072'780));
}

TEST_CASE("compare_of_a_joined_and_a_host_only_run_compares_only_shared_stages", "[compare]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "joined");
  std::filesystem::create_directories(dir.path() / "host");
  WriteRun(dir.File("joined/host.ntp"), dir.File("joined/target.ntp"), RunSpec{}, Tutorial);
  // Host recorded alone: its network and target (H3-H2) is 500 us slower, its block layer 0.1 us.
  WriteRun(dir.File("host/host.ntp"), "", RunSpec{}, [](int i) {
    CommandTiming t = Tutorial(i);
    t.network += 500'000;
    t.block_submit += 100;
    return t;
  });
  Comparison c = Compare(ReportOf({dir.File("joined/host.ntp"), dir.File("joined/target.ntp")}),
                         ReportOf({dir.File("host/host.ntp")}));
  REQUIRE(c.groups.size() == 1);
  const GroupComparison& g = c.groups[0];
  std::vector<Stage> compared;
  for (const StageDelta& d : g.stages) compared.push_back(d.stage);
  CHECK(compared == std::vector<Stage>{Stage::kHostBlock, Stage::kHostDriver, Stage::kEndToEnd});
  REQUIRE(g.grew_most.has_value());
  CHECK(*g.grew_most == Stage::kHostBlock);
  const std::string text = RenderText(c);
  CHECK_THAT(text, Catch::Contains("not compared: network, target driver, storage (only in base); "
                                   "network and target (not recorded) (only in new)"));
  CHECK_THAT(text, Catch::Contains("grew most of the compared stages: host block layer, +0.10 us"));
  CHECK_THAT(text, !Catch::Contains("  network        "));
  auto j = ToJson(c);
  CHECK(j["groups"][0]["not_compared"]["base_only"] ==
        std::vector<std::string>{"network", "target_driver", "storage"});
  CHECK(j["groups"][0]["not_compared"]["new_only"] == std::vector<std::string>{"network_and_target"});
}

TEST_CASE("probe_runs_the_kernel_skipped_are_not_reported_as_lost_records", "[report]") {
  Report report;
  report.records = RecordTally{.host = 100, .target = 100, .matched = 100};
  report.losses.set_nested_probe_miss(1);
  std::string text = RenderText(report);
  CHECK_THAT(text, !Catch::Contains("lost:"));
  CHECK_THAT(text, Catch::Contains("1 probe run skipped by the kernel (nested on one CPU), not a "
                                   "lost record: a sampled command hit by one is counted above as "
                                   "incomplete, unmatched or lost\n"));
  report.losses.set_ring_buffer_full(2);
  report.losses.set_nested_probe_miss(3);
  text = RenderText(report);
  CHECK_THAT(text, Catch::Contains("lost: 2 ring buffer full\n"));
  CHECK_THAT(text, Catch::Contains("3 probe runs skipped by the kernel"));
  auto j = ToJson(report);
  CHECK(j["losses"]["ring_buffer_full"] == 2);
  CHECK_FALSE(j["losses"].contains("nested_probe_miss"));
  CHECK(j["probe_runs_skipped"] == 3);
}

TEST_CASE("untracked_nvme_tcp_sockets_are_reported_apart_from_lost_records", "[report]") {
  Report report;
  report.records = RecordTally{.host = 10, .target = 10, .matched = 10};
  report.losses.set_missing_stamp(2);
  report.losses.set_socket_table_full(2);
  std::string text = RenderText(report);
  CHECK_THAT(text, Catch::Contains("lost: 2 missing stamp\n"));
  CHECK_THAT(text, Catch::Contains("2 NVMe/TCP sockets pushed out of the host's socket table"));
  auto j = ToJson(report);
  CHECK_FALSE(j["losses"].contains("socket_table_full"));
  CHECK(j["socket_table_full"] == 2);
}

TEST_CASE("interval_summary_prints_one_line_per_group_and_starts_afresh", "[interval]") {
  IntervalSummary summary(10);
  for (int i = 0; i < 50; ++i) {
    CommandTiming t = Tutorial(i);
    auto host = MakeRecord(v1::ROLE_HOST, {.cid = static_cast<uint32_t>(i)},
                           HostStamps(1000 + i, t.block_submit, t.driver_submit, 71'010,
                                      t.driver_complete, t.block_complete),
                           "nvme0n1");
    summary.Add(&host, nullptr);
  }
  auto lines = IntervalSummary::Lines(summary.Take(2'000'000'000));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "read 4KiB nvme0n1: 50 sampled (25.0/s) | mean 72.78 us p99 72.78 us | host block layer 1 % "
        "host driver 2 % network and target (not recorded) 98 %");
  CHECK(IntervalSummary::Lines(summary.Take(1'000'000'000)).empty());
}

// An agent knows its interval's scope before the first record (its role's side alone): the lines
// are those of a summary whose first record decides it, local devices' commands included.
TEST_CASE("interval_summary_with_its_scope_known_up_front_prints_the_same_lines", "[interval]") {
  IntervalSummary deciding(10);
  IntervalSummary known(10, Scope::kHostOnly);
  for (int i = 0; i < 60; ++i) {
    CommandTiming t = Tutorial(i);
    auto host = MakeRecord(v1::ROLE_HOST, {.cid = static_cast<uint32_t>(i)},
                           HostStamps(1000 + i, t.block_submit, t.driver_submit, 71'010,
                                      t.driver_complete, t.block_complete),
                           i % 3 == 0 ? "loop0" : "nvme0n1");
    if (i % 3 == 0) host.set_transport(v1::TRANSPORT_LOCAL);  // the first record is local
    if (i % 7 == 0) host.set_opcode(0x01);
    deciding.Add(&host, nullptr);
    known.Add(&host, nullptr);
  }
  v1::DeviceCounters counters;
  counters.set_device("nvme0n1");
  counters.set_reads(30);  // fewer than sampled x rate: the IOPS are estimated from the samples
  counters.set_read_bytes(30 * 4096);
  deciding.AddCounters(counters);
  known.AddCounters(counters);
  const auto lines = IntervalSummary::Lines(known.Take(2'000'000'000));
  CHECK(lines.size() >= 3);
  CHECK(lines == IntervalSummary::Lines(deciding.Take(2'000'000'000)));
}

TEST_CASE("report_refuses_pairs_whose_target_outlasts_the_host_and_says_so", "[report]") {
  // The target took 80 us of storage where the host waited for 50 us of it: the target's span is
  // longer than the host's H2..H3, so the halves cannot be one command (a target stamp in the
  // wrong place). The join refuses every pair rather than show a negative network.
  TempDir dir;
  auto storage_of = [](uint64_t storage) {
    return [storage](int) { return CommandTiming{300, 800, 470, 200, 10'000, 200, 300, storage, 210, 300}; };
  };
  WriteRun(dir.File("host.ntp"), "", RunSpec{.commands = 40}, storage_of(50'000));
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 40}, storage_of(80'000));
  const Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  CHECK(report.records.matched == 0);
  CHECK(report.records.refused == 40);
  CHECK(report.records.host_only == 40);
  CHECK(report.records.target_only == 40);
  CHECK_THAT(RenderText(report), Catch::Contains("40 pair(s) of one command id and LBA refused"));

  // A run whose stamps fit refuses nothing.
  TempDir good;
  WriteRun(good.File("host.ntp"), good.File("target.ntp"), RunSpec{.commands = 40}, storage_of(50'000));
  const Report fine = ReportOf({good.File("host.ntp"), good.File("target.ntp")});
  CHECK(fine.records.refused == 0);
  CHECK(fine.records.matched == 40);
  CHECK_THAT(RenderText(fine), !Catch::Contains("refused"));
}

TEST_CASE("report_warns_when_a_component_is_negative", "[report]") {
  // T1 stamped 5 us before T0 (a request-init probe firing before the capsule is complete): the
  // target driver stage (T2-T0 + T5-T3) stays positive, its component T0-T1 does not.
  ReportBuilder builder(Scope::kTargetOnly);
  for (int i = 0; i < 20; ++i) {
    std::vector<uint64_t> stamps = TargetStamps(1'000'000 + i * 100'000, 2'000, 3'000, 50'000, 1'000, 2'000);
    stamps[NTPROF_T1_REQ_INIT] = stamps[NTPROF_T0_CAPSULE_RECEIVED] - 5'000;
    v1::Record r = MakeRecord(v1::ROLE_TARGET, {.cid = static_cast<uint32_t>(i)}, stamps, "nullb0");
    builder.Add(nullptr, &r);
  }
  const std::string text = RenderText(builder.Build(1, 10'000'000'000, nullptr));
  CHECK_THAT(text, Catch::Contains("have a negative capsule received to request init (T0-T1) (min "
                                   "-5.00 us): a component is never negative"));
  CHECK_THAT(text, !Catch::Contains("negative target driver"));
}

namespace {

// nvmet-rdma as recorded by the target alone: a 4 KiB read whose data WRITE and response SEND
// are posted at T4 and complete (the host's ACK back) 20 us later at T5, and a 128 KiB write whose
// data the target pulls with an RDMA READ of 4 us between request init and backend submit.
v1::Record RdmaTargetRecord(bool write, int i) {
  CommandId id{.cid = static_cast<uint32_t>(i % 64), .slba = static_cast<uint64_t>(i) * 256};
  auto ts = write ? TargetStamps(1'000'000 + i * 1'000'000ull, 100, 4'100, 10'000, 0, 100)
                  : TargetStamps(1'000'000 + i * 1'000'000ull, 200, 300, 10'000, 0, 20'000);
  if (write) {
    id.opcode = 0x01;
    id.nlb = 255;
    id.bytes = 128 * 1024;
    ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T1_REQ_INIT] + 50;
    ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T_XFER_POSTED] + 4'000;
  } else {
    ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T4_RESPOND];
    ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T5_REPLY_SENT];
  }
  v1::Record r = MakeRecord(v1::ROLE_TARGET, id, ts, "nullb0");
  r.set_transport(v1::TRANSPORT_RDMA);
  return r;
}

}  // namespace

TEST_CASE("golden_target_only_rdma_report_names_the_wait_for_the_hosts_ack", "[report]") {
  ReportBuilder builder(Scope::kTargetOnly);
  for (int i = 0; i < 10; ++i) {
    for (bool write : {false, true}) {
      const v1::Record r = RdmaTargetRecord(write, i);
      builder.Add(nullptr, &r);
    }
  }
  const Report report = builder.Build(1, 1'000'000'000, nullptr);
  CHECK(report.transport == "rdma");
  // Read: 30.5 us in the target = driver 0.5 + storage 10 + 20 waiting for the host's ACK (the
  // WRITE+SEND completion), no data waited for. Write: 14.3 us = driver 0.3 + storage 10 + the
  // 4 us RDMA READ of its data. Every number of a row in the header's columns, however long the
  // label.
  const std::string expected =
      "read 4KiB nullb0  (target only, 10 sampled, 1.0 s)\n"
      "  latency (us): mean 30.50  p50 30.50  p99 30.50  p99.9 30.50\n"
      "  stage                                                mean us    share   avg QD\n"
      "  target driver                                           0.50    1.6 %     0.00  ▌\n"
      "  storage                                                10.00   32.8 %     0.00  █████████▉\n"
      "  waiting on the network (data transfers)                 0.00    0.0 %     0.00  \n"
      "  waiting for the host's ACK (RDMA send completion)      20.00   65.6 %     0.00  ███████████████████▋\n"
      "  in target (T0-T5)                                      30.50  100.0 %     0.00  \n"
      "  largest: waiting for the host's ACK (RDMA send completion) (20.00 us), 66 % of the latency\n"
      "\n"
      "write 128KiB nullb0  (target only, 10 sampled, 1.0 s)\n"
      "  latency (us): mean 14.30  p50 14.30  p99 14.30  p99.9 14.30\n"
      "  stage                                                mean us    share   avg QD\n"
      "  target driver                                           0.30    2.1 %     0.00  ▋\n"
      "  storage                                                10.00   69.9 %     0.00  █████████████████████\n"
      "  waiting on the network (data transfers)                 4.00   28.0 %     0.00  ████████▍\n"
      "  waiting for the host's ACK (RDMA send completion)       0.00    0.0 %     0.00  \n"
      "  in target (T0-T5)                                      14.30  100.0 %     0.00  \n"
      "  largest: storage (10.00 us), 70 % of the latency\n"
      "\n"
      "records: 0 host, no target recording\n";
  CHECK(RenderText(report) == expected);
}

TEST_CASE("target_only_tcp_report_has_no_rdma_ack_wait_and_aligns_its_rows", "[report]") {
  TempDir dir;
  WriteRun("", dir.File("target.ntp"), RunSpec{.commands = 100}, Tutorial);
  const std::string text = RenderText(ReportOf({dir.File("target.ntp")}));
  CHECK_THAT(text, !Catch::Contains("ACK"));
  // "waiting on the network (data transfers)" is 39 characters: the numbers of its row stand
  // under the header's, as every other row's
  CHECK_THAT(text, Catch::Contains("  stage                                      mean us    share   avg QD\n"));
  CHECK_THAT(text, Catch::Contains("  waiting on the network (data transfers)       0.00    0.0 %     0.00  \n"));
  CHECK_THAT(text, Catch::Contains("  storage                                      60.00   "));
}

TEST_CASE("detail_heads_its_component_columns_by_name", "[report]") {
  TempDir dir;
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 100}, Tutorial);
  const std::string text = RenderText(ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}),
                                      TextOptions{.detail = true});
  // avg QD of each component, under "avg QD" (it was headed "L"); p50 and p99 after it.
  CHECK_THAT(text, Catch::Contains("  component                                           n    mean us   avg QD     p50 us     p99 us\n"));
  CHECK_THAT(text, Catch::Contains("    drive"));
  CHECK_THAT(text, !Catch::Contains(" L "));
}

TEST_CASE("passthrough_commands_the_block_statistics_miss_get_an_estimate_not_0_iops", "[report]") {
  // fio --ioengine=io_uring_cmd on /dev/ng0n1: 100 sampled reads 1 ms apart at 1 in 10, and the
  // namespace's block statistics counted none of them.
  ReportBuilder builder(Scope::kHostOnly);
  for (int i = 0; i < 100; ++i) {
    const v1::Record r = MakeRecord(v1::ROLE_HOST, {.cid = static_cast<uint32_t>(i % 64)},
                                    HostStamps(1'000'000 + i * 1'000'000ull, 300, 800, 71'010, 470, 200),
                                    "nvme0n1");
    builder.Add(&r, nullptr);
  }
  v1::DeviceCounters counters;
  counters.set_device("nvme0n1");
  builder.AddCounters(counters);
  const Report report = builder.Build(10, 10'000'000'000, nullptr, RateSpan::kIo);
  REQUIRE(report.groups.size() == 1);
  const auto& t = report.groups[0].throughput;
  REQUIRE(t.has_value());
  const double io_span_s = 0.099'072'780;  // first H0 to the last H5
  CHECK(t->iops == Approx(100 * 10 / io_span_s));
  CHECK(t->bytes_per_s == Approx(100 * 10 * 4096 / io_span_s));
  REQUIRE(t->estimated.has_value());
  CHECK(t->estimated->sampled == 100);
  CHECK(t->estimated->block_counted == 0);
  CHECK_THAT(RenderText(report),
             Catch::Contains("throughput (all reads on nvme0n1, over the 0.1 s they had I/O): ~10094 "
                             "IOPS, 39.4 MiB/s, estimated from 100 sampled x 1 in 10: the block "
                             "statistics counted 0"));
  CHECK(ToJson(report)["groups"][0]["throughput"]["estimated_from"]["sampled"] == 100);

  // Counted by the block statistics (at least every sampled command): their count, no estimate.
  counters.set_reads(1000);
  counters.set_read_bytes(1000 * 4096);
  builder.AddCounters(counters);
  const Report counted = builder.Build(10, 10'000'000'000, nullptr, RateSpan::kIo);
  CHECK_FALSE(counted.groups[0].throughput->estimated.has_value());
  CHECK(counted.groups[0].throughput->iops == Approx(1000 / io_span_s));
}

TEST_CASE("the_reports_transport_is_the_one_its_records_name", "[report]") {
  // An SPDK or user-space host recorded with --spdk-host LIB: the file's header says tcp (the
  // default), the records NVMe/RDMA, as the target's. Not "mixed".
  TempDir dir;
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"),
           RunSpec{.commands = 50, .record_transport = v1::TRANSPORT_RDMA}, Tutorial);
  const Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")});
  CHECK(report.records.matched == 50);
  CHECK(report.transport == "rdma");
}

// Issue 41 item 10: a session that selected targets and a host with a local block device. The
// local commands are complete with their host record: their own group (host only), not leftovers
// of the join.
TEST_CASE("a_joined_report_keeps_a_local_devices_commands_as_their_own_group", "[report]") {
  TempDir dir;
  const RunSpec spec{.commands = 100};
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), spec, Tutorial);
  v1::FileHeader header = Header(spec, v1::ROLE_HOST);
  header.set_hostname("laptop");
  header.set_transport(v1::TRANSPORT_LOCAL);
  auto writer = NtpWriter::Create(dir.File("laptop.ntp"), header);
  REQUIRE(writer.ok());
  v1::RecordBatch batch;
  for (int i = 0; i < 5; ++i) {
    std::vector<uint64_t> stamps(NTPROF_HOST_STAMPS, 0);
    const uint64_t h0 = spec.host_mono_start + 5'000 + static_cast<uint64_t>(i) * 1'000'000;
    stamps[NTPROF_H0_BLOCK_START] = h0;
    stamps[NTPROF_H1_DRIVER_SUBMIT] = h0 + 500;
    stamps[NTPROF_H5_BLOCK_DONE] = h0 + 30'500;
    v1::Record r = MakeRecord(v1::ROLE_HOST, CommandId{.nqn = "", .slba = 8u * i}, stamps, "loop0");
    r.set_transport(v1::TRANSPORT_LOCAL);
    *batch.add_records() = r;
  }
  REQUIRE((*writer)->WriteBatch(batch).ok());
  v1::FileTrailer trailer;
  trailer.set_end_wall_ns(spec.wall_start_ns + spec.span_ns);
  trailer.set_end_mono_ns(spec.host_mono_start + spec.span_ns);
  REQUIRE((*writer)->Finalize(trailer).ok());

  const Report report =
      ReportOf({dir.File("host.ntp"), dir.File("target.ntp"), dir.File("laptop.ntp")});
  CHECK(report.records.matched == 100);
  CHECK(report.records.host_only == 0);
  const GroupReport* local = nullptr;
  for (const auto& g : report.groups) {
    if (g.device == "loop0") local = &g;
  }
  REQUIRE(local != nullptr);
  CHECK(local->scope == Scope::kHostOnly);
  CHECK(local->latency.n == 5);
  CHECK(local->latency.mean_ns == Approx(30'500));
  const std::string text = RenderText(report);
  CHECK_THAT(text, Catch::Contains("read 4KiB loop0"));
}
