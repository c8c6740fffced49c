#include <catch2/catch.hpp>

#include "record_converter.h"

namespace ntprof::agent {
namespace {

ntprof_record HostRead() {
  ntprof_record r{};
  for (int i = 0; i <= NTPROF_H5_BLOCK_DONE; ++i) r.stamps[i] = 1000 + i;
  r.stamps[NTPROF_H_RESPONSE_RECEIVED] = 1004;
  r.slba = 4096;
  r.nsid = 1;
  r.nlb = 7;
  r.bytes = 4096;
  r.ctrl = 0;
  r.qid = 2;
  r.cid = 0x1003;
  r.opcode = 0x02;
  r.role = NTPROF_ROLE_HOST;
  r.transport = NTPROF_TRANSPORT_TCP;
  return r;
}

TEST_CASE("host_record_converts_with_resolved_identity") {
  RecordIdentity id{"nqn.x", 5, "nvme0n1"};
  v1::Record p;
  ConvertRecord(HostRead(), id, "hostA", &p);
  CHECK(p.role() == v1::ROLE_HOST);
  CHECK(p.transport() == v1::TRANSPORT_TCP);
  CHECK(p.opcode() == 2);
  CHECK(p.slba() == 4096);
  CHECK(p.nlb() == 7);
  CHECK(p.cid() == 0x1003);
  CHECK(p.qid() == 2);
  CHECK(p.subsys_nqn() == "nqn.x");
  CHECK(p.cntlid() == 5);
  CHECK(p.device() == "nvme0n1");
  CHECK(p.agent() == "hostA");
  REQUIRE(p.stamps_size() == NTPROF_HOST_STAMPS);
  CHECK(p.stamps(NTPROF_H3_REPLY_RECEIVED) == 1003);
  CHECK(p.stamps(NTPROF_H_R2T_RECEIVED) == 0);
}

TEST_CASE("target_record_carries_target_stamps") {
  ntprof_record r{};
  r.role = NTPROF_ROLE_TARGET;
  r.stamps[NTPROF_T_RESPONSE_SENT] = 77;
  v1::Record p;
  ConvertRecord(r, {}, "t", &p);
  REQUIRE(p.stamps_size() == NTPROF_TARGET_STAMPS);
  CHECK(p.stamps(NTPROF_T_RESPONSE_SENT) == 77);
}

TEST_CASE("missing_core_stamp_is_per_transport") {
  ntprof_record r = HostRead();
  CHECK_FALSE(MissesCoreStamp(r));
  r.stamps[NTPROF_H2_CAPSULE_SENT] = 0;
  CHECK(MissesCoreStamp(r));
  r.transport = NTPROF_TRANSPORT_LOCAL;  // local devices have no H2-H4
  CHECK_FALSE(MissesCoreStamp(r));
  r.opcode = 0x00;  // flush: no data path, not judged
  r.stamps[NTPROF_H1_DRIVER_SUBMIT] = 0;
  CHECK_FALSE(MissesCoreStamp(r));
}

}  // namespace
}  // namespace ntprof::agent
