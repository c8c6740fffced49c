// Records as an agent ships them (RecordBatch.raw_records) and what readers make of them.
#include <catch2/catch.hpp>

#include <cstring>

#include "ntp_reader.h"
#include "ntp_writer.h"
#include "raw_records.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

ntprof_record TargetWrite(uint16_t cid, uint16_t identity) {
  ntprof_record r{};
  for (int i = 0; i < NTPROF_TARGET_STAMPS; ++i) r.stamps[i] = 5'000 + 10 * i;
  r.slba = 1ull << 40;
  r.nsid = 3;
  r.nlb = 15;
  r.bytes = 8192;
  r.ctrl = 99;  // agent-local: not on the message
  r.flags = NTPROF_F_WRITE | NTPROF_F_R2T;
  r.qid = 4;
  r.cid = cid;
  r.status = 0x4002;
  r.opcode = 0x01;
  r.role = NTPROF_ROLE_TARGET;
  r.transport = NTPROF_TRANSPORT_TCP;
  r.stack = NTPROF_STACK_SPDK;
  r.pad = identity;
  return r;
}

// A batch as an agent ships it: raw records, two identities.
v1::RecordBatch RawBatch(std::initializer_list<ntprof_record> records) {
  v1::RecordBatch b;
  b.set_seq(7);
  for (const ntprof_record& r : records)
    b.mutable_raw_records()->append(reinterpret_cast<const char*>(&r), sizeof r);
  auto* a = b.add_identities();
  a->set_subsys_nqn("nqn.2014-08.org.example:a");
  a->set_cntlid(12);
  a->set_device("nullb0");
  a->set_agent("target-1");
  b.add_identities()->set_subsys_nqn("nqn.2014-08.org.example:b");
  b.set_raw_layout(NTPROF_RECORD_LAYOUT);
  return b;
}

}  // namespace

TEST_CASE("raw_records_convert_field_by_field_with_their_identity", "[raw]") {
  v1::RecordBatch b = RawBatch({TargetWrite(0x21, 0), TargetWrite(0x22, 1)});
  REQUIRE(ExpandRawRecords(&b).ok());
  REQUIRE(b.records_size() == 2);
  const v1::Record& r = b.records(0);
  CHECK(r.role() == v1::ROLE_TARGET);
  CHECK(r.transport() == v1::TRANSPORT_TCP);
  CHECK(r.stack() == v1::STACK_SPDK);
  CHECK(r.opcode() == 1);
  CHECK(r.nsid() == 3);
  CHECK(r.slba() == 1ull << 40);
  CHECK(r.nlb() == 15);
  CHECK(r.bytes() == 8192);
  CHECK(r.qid() == 4);
  CHECK(r.cid() == 0x21);
  CHECK(r.flags() == (NTPROF_F_WRITE | NTPROF_F_R2T));
  CHECK(r.status() == 0x4002);
  CHECK(r.subsys_nqn() == "nqn.2014-08.org.example:a");
  CHECK(r.cntlid() == 12);
  CHECK(r.device() == "nullb0");
  CHECK(r.agent() == "target-1");
  REQUIRE(r.stamps_size() == NTPROF_TARGET_STAMPS);
  CHECK(r.stamps(NTPROF_T_RESPONSE_SENT) == 5'000 + 10 * NTPROF_T_RESPONSE_SENT);
  CHECK(b.records(1).subsys_nqn() == "nqn.2014-08.org.example:b");
  CHECK(b.records(1).cntlid() == 0);
  CHECK(b.raw_records().empty());
  CHECK(b.identities_size() == 0);
  CHECK(b.raw_layout() == 0);
  CHECK(b.seq() == 7);
}

TEST_CASE("a_record_message_survives_its_raw_form", "[raw]") {
  v1::RecordBatch b = RawBatch({TargetWrite(9, 0)});
  REQUIRE(ExpandRawRecords(&b).ok());
  const v1::Record original = b.records(0);
  ntprof_record raw = RawFromRecord(original);
  v1::RecordIdentity id;
  id.set_subsys_nqn(original.subsys_nqn());
  id.set_cntlid(original.cntlid());
  id.set_device(original.device());
  id.set_agent(original.agent());
  v1::Record again;
  RecordFromRaw(raw, id, &again);
  CHECK(again.SerializeAsString() == original.SerializeAsString());
}

TEST_CASE("raw_records_that_cannot_be_read_are_refused_and_left_as_they_were", "[raw]") {
  SECTION("a layout this build does not know") {
    v1::RecordBatch b = RawBatch({TargetWrite(1, 0)});
    b.set_raw_layout(NTPROF_RECORD_LAYOUT + 1);
    const absl::Status st = ExpandRawRecords(&b);
    CHECK(absl::IsFailedPrecondition(st));
    CHECK_THAT(std::string(st.message()), Catch::Contains("upgrade the collector"));
    CHECK(b.records_size() == 0);
    CHECK(b.raw_records().size() == sizeof(ntprof_record));
  }
  SECTION("a length that is no whole number of records") {
    v1::RecordBatch b = RawBatch({TargetWrite(1, 0)});
    b.mutable_raw_records()->pop_back();
    CHECK(absl::IsDataLoss(ExpandRawRecords(&b)));
    CHECK(b.records_size() == 0);
  }
  SECTION("an identity the batch does not carry") {
    v1::RecordBatch b = RawBatch({TargetWrite(1, 0), TargetWrite(2, 2)});
    const absl::Status st = ExpandRawRecords(&b);
    CHECK(absl::IsDataLoss(st));
    CHECK_THAT(std::string(st.message()), Catch::Contains("record 1 names identity 2"));
    CHECK(b.records_size() == 0);
  }
  SECTION("raw records without a layout") {
    v1::RecordBatch b = RawBatch({TargetWrite(1, 0)});
    b.clear_raw_layout();
    CHECK_FALSE(ExpandRawRecords(&b).ok());
  }
}

TEST_CASE("ntp_reader_converts_raw_records_and_counts_them", "[raw][ntp]") {
  TempDir dir;
  const std::string path = dir.File("raw.ntp");
  {
    v1::FileHeader header;
    header.set_role(v1::ROLE_TARGET);
    auto writer = NtpWriter::Create(path, header);
    REQUIRE(writer.ok());
    REQUIRE((*writer)->WriteBatch(RawBatch({TargetWrite(1, 0), TargetWrite(2, 1)})).ok());
    REQUIRE((*writer)->Finalize(v1::FileTrailer{}).ok());
  }
  auto reader = NtpReader::Open(path);
  REQUIRE(reader.ok());
  v1::RecordBatch batch;
  auto more = (*reader)->Next(&batch);
  REQUIRE(more.ok());
  REQUIRE(*more);
  REQUIRE(batch.records_size() == 2);
  CHECK(batch.records(1).cid() == 2);
  CHECK(batch.records(1).subsys_nqn() == "nqn.2014-08.org.example:b");
  more = (*reader)->Next(&batch);
  REQUIRE(more.ok());  // the trailer's count (2) is the raw records'
  CHECK_FALSE(*more);
  CHECK((*reader)->finalized());
}

TEST_CASE("ntp_reader_names_the_batch_whose_raw_records_it_cannot_read", "[raw][ntp]") {
  TempDir dir;
  const std::string path = dir.File("future.ntp");
  {
    auto writer = NtpWriter::Create(path, v1::FileHeader{});
    REQUIRE(writer.ok());
    v1::RecordBatch b = RawBatch({TargetWrite(1, 0)});
    b.set_raw_layout(NTPROF_RECORD_LAYOUT + 1);
    REQUIRE((*writer)->WriteBatch(b).ok());
  }
  auto reader = NtpReader::Open(path);
  REQUIRE(reader.ok());
  v1::RecordBatch batch;
  auto more = (*reader)->Next(&batch);
  REQUIRE_FALSE(more.ok());
  CHECK_THAT(std::string(more.status().message()),
             Catch::Contains("batch at byte") && Catch::Contains("layout 2"));
}
