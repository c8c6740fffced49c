#include <catch2/catch.hpp>

#include "record_factory.h"
#include "stage_model.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {
int64_t StageOf(const CommandBreakdown& b, Stage s) {
  REQUIRE(b.stage(s).has_value());
  return *b.stage(s);
}
int64_t ComponentOf(const CommandBreakdown& b, Component c) {
  REQUIRE(b.component(c).has_value());
  return *b.component(c);
}
}  // namespace

TEST_CASE("joined_command_splits_into_the_five_stages_by_hand", "[stage_model]") {
  // Host clock starts at 1,000,000; the target clock at 5,000,000,000 (no sync needed).
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1'000'000, 300, 800, 71'010, 470, 200), "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, TargetStamps(5'000'000'000, 200, 300, 60'000, 210, 300), "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(b->scope == Scope::kJoined);
  CHECK(StageOf(*b, Stage::kHostBlock) == 500);       // 300 + 200
  CHECK(StageOf(*b, Stage::kHostDriver) == 1270);     // 800 + 470
  CHECK(StageOf(*b, Stage::kTargetDriver) == 1010);   // (200 + 300) + (210 + 300)
  CHECK(StageOf(*b, Stage::kStorage) == 60'000);
  CHECK(StageOf(*b, Stage::kNetwork) == 10'000);      // 71,010 - 61,010
  CHECK(StageOf(*b, Stage::kEndToEnd) == 72'780);
  CHECK(ComponentOf(*b, Component::kTargetReceive) == 200);
  CHECK(ComponentOf(*b, Component::kTargetSubmit) == 300);
  CHECK(ComponentOf(*b, Component::kTargetRespond) == 210);
  CHECK(ComponentOf(*b, Component::kTargetSend) == 300);
  CHECK(ComponentOf(*b, Component::kFabric) == 10'000);
  CHECK_FALSE(b->stage(Stage::kNetworkAndTarget).has_value());
}

TEST_CASE("kernel_target_t0_at_t1_and_t4_at_t3_have_no_receive_or_respond_component",
          "[stage_model]") {
  // nvmet: T0 is stamped with T1 (nvmet_req_init is called where the capsule completes) and T4
  // with T3 (the response is queued right after nvmet_req_complete)
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1'000'000, 300, 800, 71'010, 470, 200), "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, TargetStamps(5'000'000'000, 0, 500, 60'000, 0, 510), "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK_FALSE(b->component(Component::kTargetReceive).has_value());
  CHECK_FALSE(b->component(Component::kTargetRespond).has_value());
  CHECK(ComponentOf(*b, Component::kTargetSubmit) == 500);
  CHECK(ComponentOf(*b, Component::kTargetSend) == 510);
  CHECK(StageOf(*b, Stage::kTargetDriver) == 500 + 510);
  CHECK(StageOf(*b, Stage::kNetwork) == 71'010 - (500 + 60'000 + 510));
}

TEST_CASE("kernel_stamps_shared_by_one_call_chain_show_no_completion_component_of_their_own",
          "[stage_model]") {
  // The kernel host stamps H4 at H5 and the kernel target the drive's completion at T3: one
  // program per call chain. The block-layer completions are then not shown as zero-length parts;
  // the host block stage is its submission, the drive component runs to T3.
  auto hs = HostStamps(1'000'000, 300, 800, 71'010, 470, 0);
  auto ts = TargetStamps(5'000'000'000, 0, 500, 60'000, 0, 510);
  ts[NTPROF_T_DRIVE_ISSUE] = ts[NTPROF_T2_BACKEND_SUBMIT] + 1'000;
  ts[NTPROF_T_DRIVE_DONE] = ts[NTPROF_T3_BACKEND_DONE];
  auto host = MakeRecord(v1::ROLE_HOST, {}, hs, "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(StageOf(*b, Stage::kHostBlock) == 300);
  CHECK(ComponentOf(*b, Component::kHostBlockSubmit) == 300);
  CHECK_FALSE(b->component(Component::kHostBlockComplete).has_value());
  CHECK(ComponentOf(*b, Component::kHostDriverComplete) == 470);
  CHECK(ComponentOf(*b, Component::kTargetBlockSubmit) == 1'000);
  CHECK(ComponentOf(*b, Component::kDrive) == 59'000);
  CHECK_FALSE(b->component(Component::kTargetBlockComplete).has_value());
  CHECK(StageOf(*b, Stage::kStorage) == 60'000);
}

TEST_CASE("stages_sum_to_end_to_end", "[stage_model]") {
  for (uint64_t wait : {61'010u, 70'000u, 200'000u}) {
    auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(10, 1, 2, wait, 4, 5), "nvme0n1");
    auto target = MakeRecord(v1::ROLE_TARGET, {}, TargetStamps(99, 200, 300, 60'000, 210, 300), "nullb0");
    auto b = BreakDown(&host, &target);
    REQUIRE(b.has_value());
    int64_t sum = 0;
    for (Stage s : {Stage::kHostBlock, Stage::kHostDriver, Stage::kNetwork, Stage::kTargetDriver,
                    Stage::kStorage}) {
      sum += StageOf(*b, s);
    }
    CHECK(sum == StageOf(*b, Stage::kEndToEnd));
  }
}

TEST_CASE("r2t_round_trip_moves_from_target_driver_into_network", "[stage_model]") {
  CommandId write;
  write.opcode = 0x01;
  write.bytes = 32768;
  auto hs = HostStamps(1000, 100, 200, 50'000, 300, 100);
  hs[NTPROF_H_R2T_RECEIVED] = hs[NTPROF_H2_CAPSULE_SENT] + 5'000;
  hs[NTPROF_H_DATA_SENT] = hs[NTPROF_H_R2T_RECEIVED] + 1'000;  // host turn-around: 1 us
  auto ts = TargetStamps(1'000, 100, 20'000, 10'000, 100, 100);
  // R2T handed to TCP 1 us after init; the last data byte (which starts T2) came 19 us later; the
  // last H2CData header (T_DATA_RECEIVED) does not end the wait, its payload was still on its way
  ts[NTPROF_T_R2T_SENT] = ts[NTPROF_T1_REQ_INIT] + 1'000;
  ts[NTPROF_T_DATA_RECEIVED] = ts[NTPROF_T_R2T_SENT] + 4'000;
  auto host = MakeRecord(v1::ROLE_HOST, write, hs, "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, write, ts, "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  // host driver = 200 + 300 + 1,000 turn-around
  CHECK(StageOf(*b, Stage::kHostDriver) == 1'500);
  // target driver = (100 + 20,000) + (100 + 100) - 19,000 wait
  CHECK(StageOf(*b, Stage::kTargetDriver) == 1'300);
  CHECK(StageOf(*b, Stage::kStorage) == 10'000);
  // network = (50,000 - 1,000) - (30,300 - 19,000) = 37,700; R2T round trip 19,000 - 1,000
  CHECK(StageOf(*b, Stage::kNetwork) == 37'700);
  CHECK(ComponentOf(*b, Component::kR2tRoundTrip) == 18'000);
  CHECK(ComponentOf(*b, Component::kFabric) == 19'700);
  CHECK(ComponentOf(*b, Component::kHostR2tData) == 1'000);
  CHECK(ComponentOf(*b, Component::kTargetSubmit) == 1'000);
  CHECK(StageOf(*b, Stage::kHostBlock) + StageOf(*b, Stage::kHostDriver) +
            StageOf(*b, Stage::kNetwork) + StageOf(*b, Stage::kTargetDriver) +
            StageOf(*b, Stage::kStorage) ==
        StageOf(*b, Stage::kEndToEnd));
}

TEST_CASE("tcp_read_data_streaming_to_the_response_is_network_time", "[stage_model]") {
  // 128 KiB read: first C2HData header at H3, the response capsule 9 us later, H4 1 us after it
  auto hs = HostStamps(1000, 100, 200, 30'000, 10'000, 100);
  hs[NTPROF_H_RESPONSE_RECEIVED] = hs[NTPROF_H3_REPLY_RECEIVED] + 9'000;
  auto host = MakeRecord(v1::ROLE_HOST, {}, hs, "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, TargetStamps(1000, 100, 100, 10'000, 100, 200), "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(StageOf(*b, Stage::kHostDriver) == 200 + 1'000);
  CHECK(ComponentOf(*b, Component::kHostDriverComplete) == 1'000);
  // network = (30,000 + 9,000) - 10,500 target span; 9,000 of it is the data stream
  CHECK(StageOf(*b, Stage::kNetwork) == 28'500);
  CHECK(ComponentOf(*b, Component::kReadDataTransfer) == 9'000);
  CHECK(ComponentOf(*b, Component::kFabric) == 19'500);
  CHECK(StageOf(*b, Stage::kHostBlock) + StageOf(*b, Stage::kHostDriver) +
            StageOf(*b, Stage::kNetwork) + StageOf(*b, Stage::kTargetDriver) +
            StageOf(*b, Stage::kStorage) ==
        StageOf(*b, Stage::kEndToEnd));
}

TEST_CASE("rdma_read_data_transfer_is_network_time_unsplit", "[stage_model]") {
  auto ts = TargetStamps(1000, 100, 100, 10'000, 100, 3'000);
  ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T4_RESPOND] + 200;
  ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T_XFER_POSTED] + 2'500;
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1000, 100, 100, 20'000, 100, 100), "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(StageOf(*b, Stage::kTargetDriver) == 100 + 100 + 100 + 3'000 - 2'500);
  CHECK(ComponentOf(*b, Component::kTargetSend) == 500);
  CHECK(StageOf(*b, Stage::kNetwork) == 20'000 - 13'300 + 2'500);
  // the WRITE's completion is not a part of network (see the next case): no split
  CHECK_FALSE(b->component(Component::kRdmaDataTransfer).has_value());
  CHECK(ComponentOf(*b, Component::kFabric) == StageOf(*b, Stage::kNetwork));
}

TEST_CASE("rdma_read_completed_after_the_host_had_the_response_splits_nothing_negative",
          "[stage_model]") {
  // Measured (issue: 8 KiB randrw QD4 over soft-RoCE): the target's SEND completion came 69 ms
  // after the post while the host's whole wait was 15 ms, and "wire" came out at -57 ms.
  auto ts = TargetStamps(1000, 100, 100, 1'000, 100, 69'000);
  ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T4_RESPOND];
  ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T5_REPLY_SENT];
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1000, 100, 100, 15'000, 100, 100), "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(StageOf(*b, Stage::kNetwork) == 15'000 - 1'300);
  for (size_t i = 0; i < kComponentCount; ++i) {
    const auto c = static_cast<Component>(i);
    if (!b->component(c)) continue;
    INFO(ComponentId(c));
    CHECK(*b->component(c) >= 0);
    CHECK(*b->component(c) <= StageOf(*b, ComponentStage(c)));
  }
}

TEST_CASE("rdma_write_data_pulled_by_the_target_is_its_own_network_component", "[stage_model]") {
  // nvmet-rdma pulls a 128 KiB write with an RDMA READ between request init and backend submit
  auto ts = TargetStamps(1000, 100, 4'100, 10'000, 100, 0);
  ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T1_REQ_INIT] + 50;
  ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T_XFER_POSTED] + 4'000;
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1000, 100, 100, 16'000, 100, 100), "nvme0n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto b = BreakDown(&host, &target);
  REQUIRE(b.has_value());
  CHECK(ComponentOf(*b, Component::kRdmaDataTransfer) == 4'000);
  CHECK(StageOf(*b, Stage::kNetwork) == 16'000 - (14'300 - 4'000));
  CHECK(ComponentOf(*b, Component::kFabric) == StageOf(*b, Stage::kNetwork) - 4'000);
  CHECK(ComponentOf(*b, Component::kTargetSubmit) == 100);

  // the target recorded alone: its rows add up to its span
  auto alone = BreakDown(nullptr, &target);
  REQUIRE(alone.has_value());
  CHECK(StageOf(*alone, Stage::kTargetNetworkWait) == 4'000);
  CHECK(StageOf(*alone, Stage::kTargetDriver) + StageOf(*alone, Stage::kStorage) +
            StageOf(*alone, Stage::kTargetNetworkWait) ==
        StageOf(*alone, Stage::kTargetTotal));
}

TEST_CASE("rdma_read_alone_at_the_target_waits_for_the_hosts_ack_not_the_network", "[stage_model]") {
  // nvmet-rdma: a read's data WRITE and response SEND are posted at T4 and complete at T5 when
  // the host's acknowledgement is back: 20 us that are no wait for data.
  auto ts = TargetStamps(1000, 200, 300, 10'000, 0, 20'000);
  ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T4_RESPOND];
  ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T5_REPLY_SENT];
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  target.set_transport(v1::TRANSPORT_RDMA);
  auto alone = BreakDown(nullptr, &target);
  REQUIRE(alone.has_value());
  CHECK(StageOf(*alone, Stage::kTargetAckWait) == 20'000);
  CHECK(StageOf(*alone, Stage::kTargetNetworkWait) == 0);
  CHECK(StageOf(*alone, Stage::kTargetDriver) == 500);
  CHECK(StageOf(*alone, Stage::kTargetDriver) + StageOf(*alone, Stage::kStorage) +
            StageOf(*alone, Stage::kTargetNetworkWait) + StageOf(*alone, Stage::kTargetAckWait) ==
        StageOf(*alone, Stage::kTargetTotal));
  CHECK(StageLabel(Stage::kTargetAckWait, v1::STACK_KERNEL, v1::STACK_KERNEL) ==
        "waiting for the host's ACK (RDMA send completion)");
}

TEST_CASE("rdma_response_posted_where_it_is_queued_has_no_send_component", "[stage_model]") {
  // nvmet-rdma: T4 = the response post; a read's data WRITEs go with it and complete at T5
  auto ts = TargetStamps(1000, 100, 100, 10'000, 100, 3'000);
  ts[NTPROF_T_XFER_POSTED] = ts[NTPROF_T4_RESPOND];
  ts[NTPROF_T_XFER_DONE] = ts[NTPROF_T5_REPLY_SENT];
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1000, 100, 100, 20'000, 100, 100), "nvme1n1");
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto read = BreakDown(&host, &target);
  REQUIRE(read.has_value());
  CHECK_FALSE(read->component(Component::kTargetSend).has_value());
  CHECK_FALSE(read->component(Component::kRdmaDataTransfer).has_value());
  // a write: the response post is both T4 and T5
  auto write_stamps = TargetStamps(1000, 100, 100, 10'000, 100, 0);
  auto write_target = MakeRecord(v1::ROLE_TARGET, {}, write_stamps, "nullb0");
  auto write = BreakDown(&host, &write_target);
  REQUIRE(write.has_value());
  CHECK_FALSE(write->component(Component::kTargetSend).has_value());
  CHECK(StageOf(*write, Stage::kTargetDriver) == 300);
}

TEST_CASE("host_alone_shows_network_and_target_as_one_stage", "[stage_model]") {
  auto host = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1000, 300, 800, 71'010, 470, 200), "nvme0n1");
  auto b = BreakDown(&host, nullptr);
  REQUIRE(b.has_value());
  CHECK(b->scope == Scope::kHostOnly);
  CHECK(StageOf(*b, Stage::kNetworkAndTarget) == 71'010);
  CHECK(StageOf(*b, Stage::kEndToEnd) == 72'780);
  CHECK_FALSE(b->stage(Stage::kNetwork).has_value());
  CHECK_FALSE(b->stage(Stage::kStorage).has_value());
}

TEST_CASE("local_device_shows_block_layer_and_device_only", "[stage_model]") {
  // A loop or local NVMe device: H0 (allocated), H1 (issued to the driver), H5 (completed).
  std::vector<uint64_t> stamps(NTPROF_HOST_STAMPS, 0);
  stamps[NTPROF_H0_BLOCK_START] = 10'000;
  stamps[NTPROF_H1_DRIVER_SUBMIT] = 10'450;
  stamps[NTPROF_H5_BLOCK_DONE] = 37'450;
  auto local = MakeRecord(v1::ROLE_HOST, {}, stamps, "loop0");
  local.set_transport(v1::TRANSPORT_LOCAL);
  auto b = BreakDown(&local, nullptr);
  REQUIRE(b.has_value());
  CHECK(b->scope == Scope::kHostOnly);
  CHECK(StageOf(*b, Stage::kHostBlock) == 450);
  CHECK(StageOf(*b, Stage::kLocalDevice) == 27'000);
  CHECK(StageOf(*b, Stage::kEndToEnd) == 27'450);
  CHECK_FALSE(b->stage(Stage::kHostDriver).has_value());
  CHECK_FALSE(b->stage(Stage::kNetworkAndTarget).has_value());

  local.set_stamps(NTPROF_H5_BLOCK_DONE, 0);
  IncompleteRecord why;
  CHECK_FALSE(BreakDown(&local, nullptr, &why).has_value());
  CHECK(why.missing == "H5 block done");
}

TEST_CASE("target_alone_shows_target_driver_storage_and_its_total", "[stage_model]") {
  auto ts = TargetStamps(1000, 200, 300, 60'000, 210, 300);
  ts[NTPROF_T_DRIVE_ISSUE] = ts[NTPROF_T2_BACKEND_SUBMIT] + 1'000;
  ts[NTPROF_T_DRIVE_DONE] = ts[NTPROF_T_DRIVE_ISSUE] + 58'000;
  auto target = MakeRecord(v1::ROLE_TARGET, {}, ts, "nullb0");
  auto b = BreakDown(nullptr, &target);
  REQUIRE(b.has_value());
  CHECK(b->scope == Scope::kTargetOnly);
  CHECK(StageOf(*b, Stage::kTargetDriver) == 1'010);
  CHECK(StageOf(*b, Stage::kStorage) == 60'000);
  CHECK(StageOf(*b, Stage::kTargetTotal) == 61'010);
  CHECK(StageOf(*b, Stage::kTargetNetworkWait) == 0);
  CHECK_FALSE(b->stage(Stage::kTargetAckWait).has_value());  // NVMe/TCP has no RDMA completion
  CHECK(ComponentOf(*b, Component::kTargetBlockSubmit) == 1'000);
  CHECK(ComponentOf(*b, Component::kDrive) == 58'000);
  CHECK(ComponentOf(*b, Component::kTargetBlockComplete) == 1'000);
}

TEST_CASE("user_space_host_has_no_block_layer_stage", "[stage_model]") {
  auto hs = HostStamps(1000, 0, 800, 71'010, 470, 0);
  hs[NTPROF_H0_BLOCK_START] = 0;
  hs[NTPROF_H5_BLOCK_DONE] = 0;
  hs[NTPROF_H1_DRIVER_SUBMIT] = 1'000;
  hs[NTPROF_H2_CAPSULE_SENT] = 1'800;
  hs[NTPROF_H3_REPLY_RECEIVED] = 72'810;
  hs[NTPROF_H4_DRIVER_DONE] = 73'280;
  auto host = MakeRecord(v1::ROLE_HOST, {}, hs, "spdk");
  host.set_stack(v1::STACK_SPDK);
  auto b = BreakDown(&host, nullptr);
  REQUIRE(b.has_value());
  CHECK_FALSE(b->stage(Stage::kHostBlock).has_value());
  CHECK(StageOf(*b, Stage::kEndToEnd) == 72'280);
  CHECK(StageLabel(Stage::kHostDriver, v1::STACK_SPDK, v1::STACK_KERNEL) == "host driver (SPDK)");
  // A Python (or any other) initiator through libntprof_probe.so is not SPDK.
  CHECK(StageLabel(Stage::kHostDriver, v1::STACK_USERSPACE, v1::STACK_KERNEL) ==
        "host driver (user-space initiator)");
  CHECK(StageLabel(Stage::kTargetDriver, v1::STACK_KERNEL, v1::STACK_USERSPACE) ==
        "target driver (user-space target)");
}

TEST_CASE("a_missing_required_stamp_is_reported_not_guessed", "[stage_model]") {
  auto hs = HostStamps(1000, 300, 800, 71'010, 470, 200);
  hs[NTPROF_H3_REPLY_RECEIVED] = 0;
  auto host = MakeRecord(v1::ROLE_HOST, {}, hs, "nvme0n1");
  IncompleteRecord why;
  CHECK_FALSE(BreakDown(&host, nullptr, &why).has_value());
  CHECK(why.missing == "H3 reply received");
}
