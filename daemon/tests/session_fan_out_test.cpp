// SessionFanOut: one recorder's batches split among the sessions it records for.
#include "session_fan_out.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <tuple>

#include "ntprof_sampler.h"

using namespace ntprof;
using namespace ntprof::agent;

namespace {

// Keeps what reaches it, as a session's own sink (spool, feeds) would.
class KeptBatches : public BatchSink {
 public:
  absl::Status WriteBatch(const BatchShare& batch) override {
    batches.push_back(batch.ToMessage());
    return absl::OkStatus();
  }
  absl::Status Finalize(const v1::FileTrailer& t) override {
    trailer = t;
    finalized = true;
    return absl::OkStatus();
  }
  std::vector<v1::RecordBatch> batches;
  v1::FileTrailer trailer;
  bool finalized = false;
};

using Identity = std::tuple<uint32_t, uint64_t, uint32_t, std::string>;  // opcode, slba, cid, nqn

v1::RecordingSettings Settings(const std::string& session, uint32_t rate, uint64_t salt) {
  v1::RecordingSettings s;
  s.set_session(session);
  s.set_sample_rate(rate);
  s.set_salt(salt);
  return s;
}

std::set<Identity> IdentitiesOf(const KeptBatches& kept) {
  std::set<Identity> ids;
  size_t records = 0;
  for (const auto& b : kept.batches) {
    for (const auto& r : b.records()) {
      ids.insert({r.opcode(), r.slba(), r.cid(), r.subsys_nqn()});
      ++records;
    }
  }
  REQUIRE(records == ids.size());  // nothing twice
  return ids;
}

}  // namespace

// Two sessions at once (1 in 10, every subsystem; 1 in 1000, one subsystem): the recorder samples
// at 1 in 10, and each session gets exactly the commands it would have recorded alone - the
// stream's commands with its rate and filter applied here, independently, to the whole stream.
TEST_CASE("two_sessions_get_what_each_would_have_recorded_alone") {
  const uint64_t salt = 0x5eed;
  const std::vector<std::string> nqns = {"nqn.a", "nqn.b"};
  SessionFanOut fan_out;
  KeptBatches fine, coarse;
  v1::RecordingSettings coarse_settings = Settings("coarse", 1000, salt);
  coarse_settings.add_subsystems("nqn.b");
  int ended = 0;
  auto count_end = [&](absl::StatusOr<v1::FileTrailer> t, const std::string&) {
    REQUIRE(t.ok());
    ++ended;
  };
  REQUIRE(fan_out.Join(Settings("fine", 10, salt), &fine, 0, 0, count_end, [] {}));
  REQUIRE(fan_out.Join(coarse_settings, &coarse, 0, 0, count_end, [] {}));
  CHECK(fan_out.FinestRate() == 10);

  std::mt19937_64 rng(3);
  std::set<Identity> want_fine, want_coarse;
  const uint32_t finest = fan_out.FinestRate();
  for (int b = 0; b < 50; ++b) {
    v1::RecordBatch batch;
    for (int i = 0; i < 20'000; ++i) {
      const uint64_t slba = rng() % (1ull << 32);
      const uint32_t cid = static_cast<uint32_t>(rng() % 1024);
      const std::string& nqn = nqns[rng() % 2];
      auto sampled_at = [&](uint32_t n) { return ntprof_sampled(2, 1, slba, 7, cid, salt, n); };
      if (sampled_at(10)) want_fine.insert({2, slba, cid, nqn});
      if (sampled_at(1000) && nqn == "nqn.b") want_coarse.insert({2, slba, cid, nqn});
      if (!sampled_at(finest)) continue;  // what the BPF side drops
      v1::Record* r = batch.add_records();
      r->set_opcode(2);
      r->set_nsid(1);
      r->set_slba(slba);
      r->set_nlb(7);
      r->set_cid(cid);
      r->set_subsys_nqn(nqn);
      r->add_stamps(1'000'000 + static_cast<uint64_t>(i));  // started while both were in
    }
    REQUIRE(WriteBatchMessage(fan_out, batch).ok());
  }
  CHECK(IdentitiesOf(fine) == want_fine);
  CHECK(IdentitiesOf(coarse) == want_coarse);
  CHECK(want_coarse.size() > 100);  // enough to mean something: ~1 in 2000 of 1,000,000

  // The finer session leaves: it ends at the next batch, and the recorder may go back to 1000.
  fan_out.Leave("fine");
  CHECK(fan_out.FinestRate() == 1000);
  CHECK_FALSE(fan_out.stop().load());
  REQUIRE(WriteBatchMessage(fan_out, v1::RecordBatch()).ok());
  CHECK(fine.finalized);
  CHECK(ended == 1);
  CHECK_FALSE(coarse.finalized);
  // The last one leaves: the recorder stops and its drained end finalizes the session.
  fan_out.Leave("coarse");
  CHECK(fan_out.stop().load());
  REQUIRE(fan_out.Finalize(v1::FileTrailer()).ok());
  CHECK(coarse.finalized);
  CHECK(ended == 2);
  // Once ended, a new session needs a new recorder.
  CHECK_FALSE(fan_out.Join(Settings("late", 10, salt), &fine, 0, 0, count_end, [] {}));
}

TEST_CASE("a_session_that_joins_later_counts_losses_from_its_own_start") {
  SessionFanOut fan_out;
  KeptBatches first, second;
  auto ignore = [](absl::StatusOr<v1::FileTrailer>, const std::string&) {};
  REQUIRE(fan_out.Join(Settings("first", 10, 1), &first, 0, 0, ignore, [] {}));
  v1::RecordBatch batch;
  batch.mutable_losses()->set_ring_buffer_full(7);
  REQUIRE(WriteBatchMessage(fan_out, batch).ok());
  REQUIRE(fan_out.Join(Settings("second", 10, 1), &second, 0, 0, ignore, [] {}));
  batch.mutable_losses()->set_ring_buffer_full(10);
  REQUIRE(WriteBatchMessage(fan_out, batch).ok());
  CHECK(first.batches.back().losses().ring_buffer_full() == 10);
  CHECK(second.batches.back().losses().ring_buffer_full() == 3);
}

TEST_CASE("a_session_with_a_duration_ends_on_its_own_while_the_other_goes_on") {
  SessionFanOut fan_out;
  KeptBatches brief, standing;
  std::string reason;
  REQUIRE(fan_out.Join(Settings("brief", 10, 1), &brief, 0, /*end_mono_ns=*/1,
                       [&](absl::StatusOr<v1::FileTrailer>, const std::string& why) { reason = why; },
                       [] {}));
  REQUIRE(fan_out.Join(Settings("standing", 1000, 1), &standing, 0, 0,
                       [](absl::StatusOr<v1::FileTrailer>, const std::string&) {}, [] {}));
  REQUIRE(WriteBatchMessage(fan_out, v1::RecordBatch()).ok());
  CHECK(brief.finalized);
  CHECK(reason == "duration elapsed");
  CHECK_FALSE(standing.finalized);
  CHECK_FALSE(fan_out.stop().load());
  CHECK(fan_out.FinestRate() == 1000);
}

TEST_CASE("a_session_keeps_only_the_commands_that_started_while_it_was_in") {
  SessionFanOut fan_out;
  KeptBatches early, late;
  auto ignore = [](absl::StatusOr<v1::FileTrailer>, const std::string&) {};
  auto record_at = [](uint64_t start) {
    v1::Record r;
    r.add_stamps(start);
    return r;
  };
  REQUIRE(fan_out.Join(Settings("early", 1, 1), &early, 0, 0, ignore, [] {}));
  // late joins at t = 1000: a command that started before is not its (it was sampled for early).
  REQUIRE(fan_out.Join(Settings("late", 1, 1), &late, 1000, 0, ignore, [] {}));
  fan_out.Leave("early");  // now: a command that starts after this is not early's
  v1::RecordBatch batch;
  *batch.add_records() = record_at(500);
  *batch.add_records() = record_at(UINT64_MAX / 2);  // far in the future
  REQUIRE(WriteBatchMessage(fan_out, batch).ok());
  REQUIRE(early.batches.size() == 1);
  REQUIRE(early.batches[0].records_size() == 1);
  CHECK(early.batches[0].records(0).stamps(0) == 500);
  REQUIRE(late.batches.size() == 1);
  REQUIRE(late.batches[0].records_size() == 1);
  CHECK(late.batches[0].records(0).stamps(0) == UINT64_MAX / 2);
}
