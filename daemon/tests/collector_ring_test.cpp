// Which collector's spool gets what (CollectorRing), read back from the spools on disk. The links
// are never started: nothing dials.
#include "collector_ring.h"
#include "raw_records.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "hash_ring.h"
#include "interval_batch.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using ntprof::agent::BatchShare;
using ntprof::agent::CollectorRing;
using ntprof::agent::CollectorRingOptions;
using ntprof::agent::Spool;
using ntprof::agent::SpoolDirName;
using ntprof::agent::WireBatch;
using ntprof::testing::TempDir;
namespace v1 = ntprof::v1;

namespace {

// Spools a batch that is a message, as the agent's recordings spool theirs.
absl::Status AppendMessage(CollectorRing& ring, const std::string& session,
                           const v1::RecordBatch& message) {
  const WireBatch batch = WireBatch::FromMessage(message);
  return ring.AppendBatch(session, BatchShare(batch, batch.extras()));
}

std::unique_ptr<CollectorRing> MakeRing(const fs::path& dir, bool per_member = true) {
  return std::make_unique<CollectorRing>(
      CollectorRingOptions{.spool = {.dir = dir, .fsync = false},
                           .spool_per_member = per_member,
                           .home_key = "host1"},
      [](const std::string& address) -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
        return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
      },
      [](const Spool&) { return v1::AgentHello(); }, [](const v1::CollectorMessage&) {});
}

// Everything a spool directory holds, in order, with the records of its batches converted as a
// collector converts them on arrival.
std::vector<v1::AgentMessage> Spooled(const fs::path& dir) {
  auto spool = Spool::Open({.dir = dir, .fsync = false});
  REQUIRE(spool.ok());
  uint64_t pos = 0;
  auto messages = (*spool)->ReadFrom(&pos, 1000, 0);
  REQUIRE(messages.ok());
  for (v1::AgentMessage& m : *messages) {
    if (m.has_batch()) REQUIRE(ntprof::ExpandRawRecords(m.mutable_batch()->mutable_batch()).ok());
  }
  return *messages;
}

v1::Record RecordOf(const std::string& nqn) {
  v1::Record r;
  r.set_subsys_nqn(nqn);
  return r;
}

const std::vector<std::string> kMembers = {"c1:7420", "c2:7420"};

}  // namespace

TEST_CASE("ring_sends_each_record_to_its_subsystems_owner_and_counters_and_losses_home",
          "[ring]") {
  TempDir tmp;
  const ntprof::common::HashRing ring(kMembers);
  const std::string home = ring.Owner("host1");
  std::map<std::string, int> expected;  // records per collector
  v1::RecordBatch batch;
  for (int i = 0; i < 40; ++i) {
    const std::string nqn = "nqn.2026-01.io.ntprof:s" + std::to_string(i);
    *batch.add_records() = RecordOf(nqn);
    ++expected[ring.Owner(nqn)];
  }
  *batch.add_records() = RecordOf("");  // local transport: home
  ++expected[home];
  batch.add_counters()->set_reads(5);
  batch.mutable_losses()->set_ring_buffer_full(3);
  REQUIRE(expected.size() == 2);  // both collectors own some of the 40
  v1::FileHeader header;
  header.set_session("s");
  v1::FileTrailer trailer;
  trailer.mutable_losses()->set_ring_buffer_full(3);
  {
    auto r = MakeRing(tmp.path());
    REQUIRE(r->SetMembers(kMembers).ok());
    CHECK(r->HomeMember() == home);
    REQUIRE(r->AppendOpened(header).ok());
    REQUIRE(AppendMessage(*r, "s", batch).ok());
    REQUIRE(r->AppendClosed("s", &trailer, "").ok());
  }
  for (const std::string& member : kMembers) {
    INFO(member);
    const auto messages = Spooled(tmp.path() / SpoolDirName(member));
    REQUIRE(messages.size() == 3);  // opened, its batch, closed: each numbered 1, 2, 3
    CHECK(messages[0].has_opened());
    CHECK(messages[0].seq() == 1);
    REQUIRE(messages[1].has_batch());
    const v1::RecordBatch& got = messages[1].batch().batch();
    CHECK(got.records_size() == expected[member]);
    for (const auto& r : got.records()) {
      if (!r.subsys_nqn().empty()) CHECK(ring.Owner(r.subsys_nqn()) == member);
    }
    const bool is_home = member == home;
    CHECK(got.counters_size() == (is_home ? 1 : 0));
    CHECK(got.losses().ring_buffer_full() == (is_home ? 3u : 0u));
    REQUIRE(messages[2].has_closed());
    CHECK(messages[2].closed().trailer().losses().ring_buffer_full() == (is_home ? 3u : 0u));
  }
}

TEST_CASE("a_collector_that_joins_mid_recording_gets_the_session_opened_before_records",
          "[ring]") {
  TempDir tmp;
  v1::FileHeader header;
  header.set_session("s");
  const std::vector<std::string> grown = {"c1:7420", "c2:7420", "c3:7420"};
  const ntprof::common::HashRing ring(grown);
  v1::RecordBatch batch;
  for (int i = 0; i < 60; ++i)
    *batch.add_records() = RecordOf("nqn.2026-01.io.ntprof:s" + std::to_string(i));
  {
    auto r = MakeRing(tmp.path());
    REQUIRE(r->SetMembers(kMembers).ok());
    REQUIRE(r->AppendOpened(header).ok());
    REQUIRE(r->SetMembers(grown).ok());
    REQUIRE(AppendMessage(*r, "s", batch).ok());
    REQUIRE(r->AppendClosed("s", nullptr, "").ok());
    // Closed, and a later member gets no open for it.
    REQUIRE(r->SetMembers({"c1:7420", "c2:7420", "c3:7420", "c4:7420"}).ok());
  }
  const auto joined = Spooled(tmp.path() / SpoolDirName("c3:7420"));
  REQUIRE(joined.size() == 3);
  CHECK(joined[0].has_opened());
  REQUIRE(joined[1].has_batch());
  CHECK(joined[1].batch().batch().records_size() > 0);
  for (const auto& r : joined[1].batch().batch().records()) CHECK(ring.Owner(r.subsys_nqn()) == "c3:7420");
  CHECK(joined[2].has_closed());
  CHECK(Spooled(tmp.path() / SpoolDirName("c4:7420")).empty());
}

TEST_CASE("without_a_collector_the_one_spool_is_the_spool_dir_itself", "[ring]") {
  TempDir tmp;
  {
    auto r = MakeRing(tmp.path(), false);
    REQUIRE(r->SetMembers({}).ok());
    CHECK(r->Members().empty());
    v1::FileHeader header;
    header.set_session("s");
    REQUIRE(r->AppendOpened(header).ok());
    CHECK(r->Stats().unacked_messages == 1);
  }
  CHECK(Spooled(tmp.path()).size() == 1);
  CHECK(SpoolDirName("unix:/run/c.sock") == "unix__run_c.sock");
}

TEST_CASE("a_collector_removed_mid_recording_gets_no_records_but_its_close_and_stays_until_then",
          "[ring]") {
  TempDir tmp;
  v1::FileHeader header;
  header.set_session("s");
  v1::RecordBatch batch;
  for (int i = 0; i < 60; ++i)
    *batch.add_records() = RecordOf("nqn.2026-01.io.ntprof:s" + std::to_string(i));
  {
    auto r = MakeRing(tmp.path());
    REQUIRE(r->SetMembers({"c1:7420", "c2:7420", "c3:7420"}).ok());
    REQUIRE(r->AppendOpened(header).ok());
    REQUIRE(r->SetMembers(kMembers).ok());
    CHECK(r->Members() == kMembers);
    REQUIRE(AppendMessage(*r, "s", batch).ok());
    CHECK(r->Retire() == 1);  // its file at c3 is open: not yet
    REQUIRE(r->AppendClosed("s", nullptr, "").ok());
    CHECK(r->Retire() == 1);  // its close is not acked yet (nothing dials here)
  }
  const auto removed = Spooled(tmp.path() / SpoolDirName("c3:7420"));
  REQUIRE(removed.size() == 2);  // opened, closed: no records
  CHECK(removed[0].has_opened());
  CHECK(removed[1].has_closed());
}

TEST_CASE("a_collector_back_in_the_ring_before_it_retired_gets_the_recordings_opened_while_it_was_out",
          "[ring]") {
  TempDir tmp;
  const std::vector<std::string> all = {"c1:7420", "c2:7420", "c3:7420"};
  const ntprof::common::HashRing ring(all);
  v1::FileHeader before, during;
  before.set_session("before");
  during.set_session("during");
  v1::RecordBatch batch;
  for (int i = 0; i < 60; ++i)
    *batch.add_records() = RecordOf("nqn.2026-01.io.ntprof:s" + std::to_string(i));
  {
    auto r = MakeRing(tmp.path());
    REQUIRE(r->SetMembers(all).ok());
    REQUIRE(r->AppendOpened(before).ok());
    REQUIRE(r->SetMembers(kMembers).ok());  // c3 out, with "before" open there
    REQUIRE(r->AppendOpened(during).ok());  // not at c3
    REQUIRE(r->SetMembers(all).ok());       // back, its spool not drained: never retired
    REQUIRE(AppendMessage(*r, "during", batch).ok());
    REQUIRE(r->AppendClosed("during", nullptr, "").ok());
    REQUIRE(r->AppendClosed("before", nullptr, "").ok());
  }
  // A collector stores a batch only after its session's SessionOpened (it drops one before).
  const auto back = Spooled(tmp.path() / SpoolDirName("c3:7420"));
  REQUIRE(back.size() == 5);
  CHECK(back[0].opened().header().session() == "before");  // once: it never lost this one
  CHECK(back[1].opened().header().session() == "during");
  REQUIRE(back[2].has_batch());
  CHECK(back[2].batch().session() == "during");
  CHECK(back[2].batch().batch().records_size() > 0);
  for (const auto& r : back[2].batch().batch().records()) CHECK(ring.Owner(r.subsys_nqn()) == "c3:7420");
  CHECK(back[3].closed().session() == "during");
  CHECK(back[4].closed().session() == "before");
}

TEST_CASE("a_batch_larger_than_a_spool_message_goes_as_several_with_the_counters_last",
          "[ring]") {
  TempDir tmp;
  const uint64_t spool_bytes = 1 << 20;  // 1 MiB: 744 records a message
  const size_t per_message = ntprof::agent::RecordsPerSpoolMessage(spool_bytes);
  REQUIRE(per_message == spool_bytes / 8 / sizeof(ntprof_record));
  v1::RecordBatch batch;
  const int n = static_cast<int>(2 * per_message + 10);
  for (int i = 0; i < n; ++i) {
    v1::Record* r = batch.add_records();
    r->set_cid(static_cast<uint32_t>(i));
  }
  batch.add_counters()->set_reads(5);
  batch.mutable_losses()->set_ring_buffer_full(3);
  {
    auto ring = std::make_unique<CollectorRing>(
        CollectorRingOptions{.spool = {.dir = tmp.path(), .max_bytes = spool_bytes, .fsync = false},
                             .home_key = "host1"},
        [](const std::string& address) -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
          return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
        },
        [](const Spool&) { return v1::AgentHello(); }, [](const v1::CollectorMessage&) {});
    REQUIRE(ring->SetMembers({}).ok());
    REQUIRE(AppendMessage(*ring, "s", batch).ok());
  }
  const auto messages = Spooled(tmp.path());
  REQUIRE(messages.size() == 3);
  uint32_t next_cid = 0;
  for (size_t m = 0; m < messages.size(); ++m) {
    INFO(m);
    REQUIRE(messages[m].has_batch());
    const v1::RecordBatch& got = messages[m].batch().batch();
    CHECK(static_cast<size_t>(got.records_size()) == (m < 2 ? per_message : 10u));
    for (const auto& r : got.records()) CHECK(r.cid() == next_cid++);  // in order, none twice
    CHECK(got.counters_size() == (m == 2 ? 1 : 0));
    CHECK(got.losses().ring_buffer_full() == (m == 2 ? 3u : 0u));
  }
  CHECK(next_cid == static_cast<uint32_t>(n));
  CHECK(ntprof::agent::RecordsPerSpoolMessage(256ull << 20) == ntprof::agent::kMaxBatchRecords);
  CHECK(ntprof::agent::RecordsPerSpoolMessage(4096) == 64);
}
