// Converting a probe firing (application clock at its rate) into the common record, without BPF.
#include <catch2/catch.hpp>
#include <cstring>

#include "spdk_event_converter.h"

namespace ntprof::agent::spdk {
namespace {

ntprof_spdk_event TargetEvent() {
  ntprof_spdk_event e;
  std::memset(&e, 0, sizeof(e));
  e.kind = NTPROF_SPDK_NVMF_TCP;
  e.req.version = 1;
  e.req.clock_hz = 2'500'000'000ull;  // a 2.5 GHz TSC
  e.req.done_ticks = 1'000'000'000'000ull;
  // T0 10 us before the probe, T5 2.5 us before it
  e.req.stamps[NTPROF_T0_CAPSULE_RECEIVED] = e.req.done_ticks - 25'000;
  e.req.stamps[NTPROF_T5_REPLY_SENT] = e.req.done_ticks - 6'250;
  e.probe_mono_ns = 5'000'000'000ull;
  e.opcode = 0x01;
  e.cntlid = 3;
  e.qid = 2;
  e.cid = 17;
  std::strcpy(e.subnqn, "nqn.2016-06.io.spdk:cnode1");
  return e;
}

TEST_CASE("ticks_to_ns_is_exact_and_does_not_overflow", "[spdk]") {
  CHECK(TicksToNs(2'500'000'000ull, 2'500'000'000ull) == 1'000'000'000ull);
  CHECK(TicksToNs(25'000, 2'500'000'000ull) == 10'000);
  // a year of TSC ticks at 3 GHz: the naive ticks * 1e9 would overflow
  const uint64_t year = 3'000'000'000ull * 3600 * 24 * 365;
  CHECK(TicksToNs(year, 3'000'000'000ull) == 1'000'000'000ull * 3600 * 24 * 365);
}

TEST_CASE("spdk_event_becomes_a_target_record_on_the_agent_clock", "[spdk]") {
  auto rec = ConvertSpdkEvent(TargetEvent());
  REQUIRE(rec.ok());
  CHECK(rec->role == NTPROF_ROLE_TARGET);
  CHECK(rec->transport == NTPROF_TRANSPORT_TCP);
  CHECK(rec->stack == NTPROF_STACK_SPDK);
  CHECK(rec->stamps[NTPROF_T0_CAPSULE_RECEIVED] == 5'000'000'000ull - 10'000);
  CHECK(rec->stamps[NTPROF_T5_REPLY_SENT] == 5'000'000'000ull - 2'500);
  CHECK(rec->stamps[NTPROF_T2_BACKEND_SUBMIT] == 0);  // not taken stays "not seen"
  CHECK(rec->ctrl == 3);
  CHECK(rec->qid == 2);
  CHECK(rec->cid == 17);
  CHECK((rec->flags & NTPROF_F_WRITE) != 0);
  auto id = SpdkIdentity(TargetEvent(), "nvmf_tgt");
  CHECK(id.subsys_nqn == "nqn.2016-06.io.spdk:cnode1");
  CHECK(id.cntlid == 3);
  CHECK(id.device == "nvmf_tgt:n0");
}

TEST_CASE("spdk_host_record_has_no_block_layer_stamps", "[spdk]") {
  ntprof_spdk_event e = TargetEvent();
  e.kind = NTPROF_SPDK_NVME_RDMA;
  auto rec = ConvertSpdkEvent(e);
  REQUIRE(rec.ok());
  CHECK(rec->role == NTPROF_ROLE_HOST);
  CHECK(rec->transport == NTPROF_TRANSPORT_RDMA);
  CHECK(rec->stamps[NTPROF_H0_BLOCK_START] == 0);
  CHECK(rec->stamps[NTPROF_H5_BLOCK_DONE] == 0);
}

TEST_CASE("a_probe_of_the_probe_library_is_a_user_space_stack_not_spdk", "[spdk]") {
  // A Python NVMe/RDMA initiator through libntprof_probe.so: the agent attached its
  // nvme_rdma_done site with the library's flag in the cookie.
  ntprof_spdk_event e = TargetEvent();
  e.kind = NTPROF_SPDK_NVME_RDMA | NTPROF_SPDK_KIND_PROBE_LIBRARY;
  auto rec = ConvertSpdkEvent(e);
  REQUIRE(rec.ok());
  CHECK(rec->role == NTPROF_ROLE_HOST);
  CHECK(rec->transport == NTPROF_TRANSPORT_RDMA);
  CHECK(rec->stack == NTPROF_STACK_USERSPACE);
  e.kind = NTPROF_SPDK_NVMF_TCP | NTPROF_SPDK_KIND_PROBE_LIBRARY;
  rec = ConvertSpdkEvent(e);
  REQUIRE(rec.ok());
  CHECK(rec->role == NTPROF_ROLE_TARGET);
  CHECK(rec->transport == NTPROF_TRANSPORT_TCP);
  CHECK(rec->stack == NTPROF_STACK_USERSPACE);
}

TEST_CASE("spdk_event_without_clock_rate_is_refused_with_the_fix", "[spdk]") {
  ntprof_spdk_event e = TargetEvent();
  e.req.clock_hz = 0;
  auto rec = ConvertSpdkEvent(e);
  REQUIRE_FALSE(rec.ok());
  CHECK_THAT(std::string(rec.status().message()), Catch::Contains("ntprof_probe_init"));
}

}  // namespace
}  // namespace ntprof::agent::spdk
