// The agent's spool on real files: numbering, acks and trimming, restart, a torn tail, and a full
// spool declaring its loss as a gap.
#include "spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "temp_dir.h"

namespace fs = std::filesystem;
using ntprof::agent::Spool;
using ntprof::agent::SpoolOptions;
using ntprof::testing::TempDir;
namespace v1 = ntprof::v1;

namespace {

v1::AgentMessage Batch(int records, size_t pad = 0) {
  v1::AgentMessage m;
  m.mutable_batch()->set_session("s");
  for (int i = 0; i < records; ++i) {
    v1::Record* r = m.mutable_batch()->mutable_batch()->add_records();
    r->set_cid(static_cast<uint32_t>(i));
    r->set_device(std::string(pad, 'x'));
  }
  return m;
}

std::unique_ptr<Spool> OpenSpool(const fs::path& dir, uint64_t max_bytes = 1 << 20,
                                 uint64_t segment_bytes = 0) {
  auto spool = Spool::Open(SpoolOptions{
      .dir = dir, .max_bytes = max_bytes, .segment_bytes = segment_bytes, .fsync = false});
  REQUIRE(spool.ok());
  return std::move(*spool);
}

std::vector<v1::AgentMessage> ReadAll(Spool& spool) {
  uint64_t pos = spool.FirstUnackedPosition();
  auto all = spool.ReadFrom(&pos, 1000000, 0);
  REQUIRE(all.ok());
  return *all;
}

size_t SegmentFiles(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".seg";
  return n;
}

}  // namespace

TEST_CASE("spool_numbers_messages_and_replays_them_in_order") {
  TempDir dir;
  auto spool = OpenSpool(dir.path());
  for (int i = 1; i <= 5; ++i) REQUIRE(*spool->Append(Batch(i)) == static_cast<uint64_t>(i));
  auto all = ReadAll(*spool);
  REQUIRE(all.size() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(all[i].seq() == static_cast<uint64_t>(i + 1));
    CHECK(all[i].batch().batch().seq() == all[i].seq());  // the record batch carries it too
    CHECK(all[i].batch().batch().records_size() == i + 1);
  }
  CHECK(spool->Stats().unacked_messages == 5);
}

TEST_CASE("spool_ack_drops_held_messages_and_trims_whole_segments") {
  TempDir dir;
  auto spool = OpenSpool(dir.path(), 1 << 20, 4096);
  for (int i = 0; i < 40; ++i) REQUIRE(spool->Append(Batch(10, 20)).ok());
  const size_t segments = SegmentFiles(dir.path());
  REQUIRE(segments >= 3);
  spool->Ack(30);
  auto rest = ReadAll(*spool);
  REQUIRE(rest.size() == 10);
  CHECK(rest.front().seq() == 31);
  CHECK(SegmentFiles(dir.path()) < segments);
  CHECK(spool->Stats().unacked_messages == 10);
  CHECK(spool->Stats().acked_seq == 30);
  spool->Ack(40);
  CHECK(ReadAll(*spool).empty());
  CHECK(spool->Stats().unacked_bytes == 0);
  // The next append rolls away from the fully acked segment: the old one goes.
  REQUIRE(*spool->Append(Batch(1)) == 41);
  spool->Ack(41);
  REQUIRE(*spool->Append(Batch(1)) == 42);
  CHECK(SegmentFiles(dir.path()) == 1);
}

TEST_CASE("spool_keeps_epoch_numbers_and_unacked_messages_across_a_restart") {
  TempDir dir;
  uint64_t epoch = 0;
  {
    auto spool = OpenSpool(dir.path(), 1 << 20, 4096);
    epoch = spool->epoch();
    for (int i = 0; i < 30; ++i) REQUIRE(spool->Append(Batch(10, 20)).ok());
    spool->Ack(30);  // everything acked and trimmed: only the numbering is left on disk
    REQUIRE(spool->Append(Batch(1)).ok());
  }
  auto spool = OpenSpool(dir.path(), 1 << 20, 4096);
  CHECK(spool->epoch() == epoch);
  CHECK(spool->Stats().last_seq == 31);
  auto rest = ReadAll(*spool);
  // Without the Welcome's ack, everything still on disk is offered again (duplicates are safe).
  REQUIRE_FALSE(rest.empty());
  CHECK(rest.back().seq() == 31);
  spool->Ack(31);  // the Welcome
  CHECK(ReadAll(*spool).empty());
  CHECK(*spool->Append(Batch(1)) == 32);
}

TEST_CASE("spool_new_directory_is_a_new_epoch_starting_at_one") {
  TempDir a, b;
  auto one = OpenSpool(a.path());
  auto two = OpenSpool(b.path());
  CHECK(one->epoch() != two->epoch());
  CHECK(*one->Append(Batch(1)) == 1);
}

TEST_CASE("spool_cuts_off_a_torn_tail_and_counts_it") {
  TempDir dir;
  fs::path segment;
  {
    auto spool = OpenSpool(dir.path());
    for (int i = 0; i < 3; ++i) REQUIRE(spool->Append(Batch(5)).ok());
  }
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().extension() == ".seg") segment = e.path();
  const auto size = fs::file_size(segment);
  SECTION("a half-written last frame") { fs::resize_file(segment, size - 7); }
  SECTION("a flipped byte in the last frame") {
    std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put('\x5a');
  }
  SECTION("garbage appended after the last frame") {
    std::ofstream(segment, std::ios::app | std::ios::binary) << "\x10\x00\x00";
  }
  auto spool = OpenSpool(dir.path());
  const auto stats = spool->Stats();
  CHECK(stats.torn_frames == 1);
  auto rest = ReadAll(*spool);
  const bool garbage_only = rest.size() == 3;
  CHECK(rest.size() == (garbage_only ? 3u : 2u));
  // The torn frame never reached the collector (it is fsynced before it is sent): its number is
  // given out again.
  CHECK(*spool->Append(Batch(1)) == rest.size() + 1);
  // The file is clean again: a second open finds nothing torn.
  spool.reset();
  CHECK(OpenSpool(dir.path())->Stats().torn_frames == 0);
}

TEST_CASE("spool_full_drops_the_oldest_and_declares_a_gap") {
  TempDir dir;
  auto spool = OpenSpool(dir.path(), 64 << 10, 8 << 10);
  const int n = 200;
  for (int i = 0; i < n; ++i) REQUIRE(spool->Append(Batch(10, 40)).ok());  // ~ 1 KiB each
  const auto stats = spool->Stats();
  CHECK(stats.disk_bytes <= (64 << 10) + (8 << 10));
  CHECK(stats.spool_full_lost > 0);
  auto rest = ReadAll(*spool);
  // One gap covers 1 .. the last dropped; every later number is still there, each once.
  uint64_t gap_first = 0, gap_last = 0;
  std::vector<uint64_t> seqs;
  for (const auto& m : rest) {
    if (m.has_gap()) {
      CHECK(m.gap().reason() == "spool full");
      gap_first = gap_first ? std::min(gap_first, m.gap().first()) : m.gap().first();
      gap_last = std::max(gap_last, m.gap().last());
    } else {
      seqs.push_back(m.seq());
    }
  }
  CHECK(gap_first == 1);
  REQUIRE_FALSE(seqs.empty());
  CHECK(seqs.front() == gap_last + 1);
  CHECK(seqs.back() == static_cast<uint64_t>(n));
  CHECK(seqs.size() == n - gap_last);
  CHECK(stats.spool_full_messages == gap_last);
  CHECK(stats.spool_full_lost == 10 * gap_last);  // in records, like every loss cause
  // Acked numbers are never declared lost: after an ack, only newer ones are.
  spool->Ack(static_cast<uint64_t>(n));
  for (int i = 0; i < 100; ++i) REQUIRE(spool->Append(Batch(10, 40)).ok());
  for (const auto& m : ReadAll(*spool)) {
    if (m.has_gap()) CHECK(m.gap().first() > static_cast<uint64_t>(n));
  }
}

TEST_CASE("spool_declared_loss_takes_a_number") {
  TempDir dir;
  auto spool = OpenSpool(dir.path());
  REQUIRE(spool->Append(Batch(1)).ok());
  REQUIRE(*spool->DeclareLost("agent restarted") == 2);
  REQUIRE(*spool->Append(Batch(1)) == 3);
  auto all = ReadAll(*spool);
  REQUIRE(all.size() == 3);
  CHECK(all[1].has_gap());
  CHECK(all[1].gap().first() == 2);
  CHECK(all[1].gap().last() == 2);
}

TEST_CASE("spool_reader_waits_for_the_next_message") {
  TempDir dir;
  auto spool = OpenSpool(dir.path());
  uint64_t pos = spool->FirstUnackedPosition();
  auto none = spool->ReadFrom(&pos, 10, 10);
  REQUIRE(none.ok());
  CHECK(none->empty());
  std::thread writer([&] {
    usleep(50 * 1000);
    (void)spool->Append(Batch(1));
  });
  auto one = spool->ReadFrom(&pos, 10, 5000);
  writer.join();
  REQUIRE(one.ok());
  CHECK(one->size() == 1);
}

TEST_CASE("spool_first_held_seq_is_what_it_can_still_send") {
  TempDir dir;
  auto spool = OpenSpool(dir.path(), 1 << 20, 4096);
  CHECK(spool->FirstHeldSeq() == 1);
  for (int i = 0; i < 30; ++i) REQUIRE(spool->Append(Batch(10, 20)).ok());
  CHECK(spool->FirstHeldSeq() == 1);
  spool->Ack(20);
  CHECK(spool->FirstHeldSeq() == 21);
  spool.reset();
  // After a restart the acked frames that were not trimmed are offered again, but nothing lower.
  auto reopened = OpenSpool(dir.path(), 1 << 20, 4096);
  CHECK(reopened->FirstHeldSeq() > 1);
  CHECK(reopened->FirstHeldSeq() <= 21);
  reopened->Ack(30);
  CHECK(reopened->FirstHeldSeq() == 31);
}
