#include <catch2/catch.hpp>

#include "record_converter.h"

#include <google/protobuf/util/message_differencer.h>

#include "batch_sink.h"
#include "wire_batch.h"

namespace ntprof::agent {
namespace {

// What a reader gets of a record the agent ships: the batch's wire form, parsed by protobuf and
// its raw records converted as the collector and NtpReader convert them.
v1::RecordBatch Shipped(const WireBatch& batch, const std::vector<uint32_t>* kept = nullptr) {
  const v1::RecordBatch extras;
  const BatchShare share(batch, extras, kept);
  std::string bytes;
  share.AppendTo(&bytes);
  CHECK(bytes.size() == share.WireSize());
  v1::RecordBatch parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  REQUIRE(ExpandRawRecords(&parsed).ok());
  return parsed;
}

v1::Record Decoded(const ntprof_record& rec, const RecordIdentity& id, const std::string& agent) {
  WireBatch batch;
  batch.Add(rec, EncodeIdentity(id, agent));
  const v1::RecordBatch shipped = Shipped(batch);
  REQUIRE(shipped.records_size() == 1);
  return shipped.records(0);
}

// The same record built as a message (ConvertRecord).
v1::Record Converted(const ntprof_record& rec, const RecordIdentity& id, const std::string& agent) {
  v1::Record p;
  ConvertRecord(rec, *EncodeIdentity(id, agent), &p);
  return p;
}

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
  for (const v1::Record& p : {Decoded(HostRead(), id, "hostA"), Converted(HostRead(), id, "hostA")}) {
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
}

TEST_CASE("target_record_carries_target_stamps") {
  ntprof_record r{};
  r.role = NTPROF_ROLE_TARGET;
  r.stamps[NTPROF_T_RESPONSE_SENT] = 77;
  const v1::Record p = Decoded(r, {}, "t");
  REQUIRE(p.stamps_size() == NTPROF_TARGET_STAMPS);
  CHECK(p.stamps(NTPROF_T_RESPONSE_SENT) == 77);
}

// Every field at its widest (a 64-bit stamp and slba, 32-bit nsid, 16-bit cid and status, long
// strings) and at zero: what a reader converts is the message ConvertRecord builds (whose fields
// the test above checks).
TEST_CASE("shipped_record_converts_to_the_same_message_at_every_width") {
  ntprof_record wide{};
  for (int i = 0; i < NTPROF_TARGET_STAMPS; ++i) wide.stamps[i] = UINT64_MAX - i;
  wide.stamps[3] = 0;  // not seen: keeps its place
  wide.slba = UINT64_MAX;
  wide.nsid = UINT32_MAX;
  wide.nlb = 65535;
  wide.bytes = UINT32_MAX;
  wide.flags = NTPROF_F_WRITE | NTPROF_F_ERROR;
  wide.qid = 65535;
  wide.cid = 65535;
  wide.status = 0x7fff;
  wide.opcode = 0xff;
  wide.role = NTPROF_ROLE_TARGET;
  wide.transport = NTPROF_TRANSPORT_RDMA;
  wide.stack = NTPROF_STACK_SPDK;
  const RecordIdentity id{std::string(300, 'q'), UINT32_MAX, "nullb0"};
  for (const ntprof_record& rec : {wide, ntprof_record{}}) {
    const v1::Record expected = Converted(rec, id, "agent-with-a-name");
    CHECK(google::protobuf::util::MessageDifferencer::Equals(
        Decoded(rec, id, "agent-with-a-name"), expected));
  }
}

// Records of several identities in one batch: each converts with its own.
TEST_CASE("each_shipped_record_keeps_its_own_identity") {
  WireBatch batch;
  const auto a = EncodeIdentity({"nqn.a", 1, "nvme0n1"}, "hostA");
  const auto b = EncodeIdentity({"nqn.b", 2, "nvme1n1"}, "hostA");
  for (uint16_t cid = 0; cid < 6; ++cid) {
    ntprof_record r = HostRead();
    r.cid = cid;
    batch.Add(r, cid % 3 == 2 ? b : a);  // a a b a a b
  }
  CHECK(batch.identity_count() == 2);  // records that alternate add no identity
  const std::vector<uint32_t> kept = {2, 3, 5};
  const v1::RecordBatch shipped = Shipped(batch, &kept);
  REQUIRE(shipped.records_size() == 3);
  CHECK(shipped.records(0).subsys_nqn() == "nqn.b");
  CHECK(shipped.records(0).device() == "nvme1n1");
  CHECK(shipped.records(1).subsys_nqn() == "nqn.a");
  CHECK(shipped.records(1).cntlid() == 1);
  CHECK(shipped.records(2).cid() == 5);
  CHECK(shipped.records(2).cntlid() == 2);
  CHECK(shipped.identities_size() == 0);  // converted: the raw fields are gone
  CHECK(shipped.raw_records().empty());
}

// A batch written through a share (some records, its own extras) is the v1.RecordBatch of those
// records and extras, as protobuf parses it and a reader converts it.
TEST_CASE("batch_share_writes_the_records_it_keeps_with_its_own_extras") {
  WireBatch batch;
  auto id = EncodeIdentity({"nqn.x", 5, "nvme0n1"}, "hostA");
  for (uint16_t cid = 0; cid < 5; ++cid) {
    ntprof_record r = HostRead();
    r.cid = cid;
    batch.Add(r, id);
  }
  v1::RecordBatch extras;
  extras.set_seq(42);
  extras.add_counters()->set_reads(7);
  extras.mutable_losses()->set_spool_full(3);
  const std::vector<uint32_t> kept = {1, 3};
  const BatchShare share(batch, extras, &kept);
  std::string bytes;
  share.AppendTo(&bytes);
  CHECK(bytes.size() == share.WireSize());
  v1::RecordBatch parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  CHECK(parsed.records_size() == 0);  // raw until converted
  CHECK(parsed.raw_records().size() == 2 * sizeof(ntprof_record));
  REQUIRE(ExpandRawRecords(&parsed).ok());
  CHECK(parsed.seq() == 42);
  CHECK(parsed.counters(0).reads() == 7);
  CHECK(parsed.losses().spool_full() == 3);
  REQUIRE(parsed.records_size() == 2);
  CHECK(parsed.records(0).cid() == 1);
  CHECK(parsed.records(1).cid() == 3);
  CHECK(parsed.records(1).subsys_nqn() == "nqn.x");
  CHECK(google::protobuf::util::MessageDifferencer::Equals(parsed, share.ToMessage()));
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
