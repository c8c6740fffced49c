#include <catch2/catch.hpp>

#include <iterator>
#include <random>

#include "ntprof_sampler.h"

namespace {

// Fraction of a stream the sampler keeps. next(i) fills the command fields of the i-th command.
template <typename Next>
double SampledFraction(uint32_t n, uint64_t salt, int commands, Next next) {
  int kept = 0;
  for (int i = 0; i < commands; ++i) {
    uint8_t opcode = 0x02;
    uint64_t slba = 0;
    uint16_t cid = 0;
    next(i, &opcode, &slba, &cid);
    kept += ntprof_sampled(opcode, 1, slba, 7, cid, salt, n);
  }
  return static_cast<double>(kept) / commands;
}

// Linux NVMe command ids: a 4-bit generation counter over the blk-mq tag.
uint16_t LinuxCid(uint32_t generation, uint16_t tag) {
  return static_cast<uint16_t>(((generation & 0xf) << 12) | tag);
}

constexpr int kCommands = 1'000'000;

}  // namespace

TEST_CASE("sampler_keeps_one_in_n_of_random_reads", "[sampler]") {
  for (uint32_t n : {10u, 100u, 1000u}) {
    std::mt19937_64 rng(42);
    double f = SampledFraction(n, 0x1234, kCommands, [&](int, uint8_t*, uint64_t* slba, uint16_t* cid) {
      *slba = rng() % (1ull << 30);
      *cid = static_cast<uint16_t>(rng() % 64);
    });
    CHECK(f == Approx(1.0 / n).epsilon(0.10));
  }
}

TEST_CASE("sampler_keeps_one_in_n_of_a_sequential_stream", "[sampler]") {
  for (uint32_t n : {10u, 100u, 1000u}) {
    double f = SampledFraction(n, 77, kCommands, [&](int i, uint8_t*, uint64_t* slba, uint16_t* cid) {
      *slba = static_cast<uint64_t>(i) * 8;
      *cid = static_cast<uint16_t>(i % 32);
    });
    CHECK(f == Approx(1.0 / n).epsilon(0.10));
  }
}

TEST_CASE("sampler_keeps_one_in_n_at_qd1_with_cycling_linux_cids", "[sampler]") {
  // QD1: always tag 0; only the generation counter changes the cid. LBAs vary (random reads).
  for (uint32_t n : {10u, 100u}) {
    std::mt19937_64 rng(7);
    double f = SampledFraction(n, 99, kCommands, [&](int i, uint8_t*, uint64_t* slba, uint16_t* cid) {
      *slba = rng() % (1ull << 28);
      *cid = LinuxCid(static_cast<uint32_t>(i), 0);
    });
    CHECK(f == Approx(1.0 / n).epsilon(0.10));
  }
}

TEST_CASE("sampler_keeps_one_in_n_of_repeated_lbas_across_sessions", "[sampler]") {
  // One LBA over and over at QD 32: the command identities are only 16 generations x 32 tags, so
  // one session keeps a fixed subset of them; the fraction is 1/N on average over sessions (salts).
  const uint32_t n = 10;
  double sum = 0;
  const int sessions = 200;
  for (int s = 0; s < sessions; ++s) {
    std::mt19937_64 rng(static_cast<uint64_t>(s));
    std::vector<uint32_t> generation(32, 0);
    sum += SampledFraction(n, static_cast<uint64_t>(s) * 7919, 20'000,
                           [&](int, uint8_t*, uint64_t* slba, uint16_t* cid) {
                             *slba = 4096;
                             const uint16_t tag = static_cast<uint16_t>(rng() % 32);
                             *cid = LinuxCid(generation[tag]++, tag);
                           });
  }
  CHECK(sum / sessions == Approx(1.0 / n).epsilon(0.10));
}

TEST_CASE("sampler_decision_depends_on_every_identity_field", "[sampler]") {
  // Changing any one identity field changes the hash: host and target must hash exactly the same
  // fields.
  const uint64_t base = ntprof_command_hash(2, 1, 100, 7, 5, 9);
  CHECK(ntprof_command_hash(1, 1, 100, 7, 5, 9) != base);
  CHECK(ntprof_command_hash(2, 2, 100, 7, 5, 9) != base);
  CHECK(ntprof_command_hash(2, 300, 100, 7, 5, 9) != base);  // a namespace past 255
  CHECK(ntprof_command_hash(2, 1, 101, 7, 5, 9) != base);
  CHECK(ntprof_command_hash(2, 1, 100 | 1ull << 31, 7, 5, 9) != base);
  CHECK(ntprof_command_hash(2, 1, 100, 7, 6, 9) != base);
  CHECK(ntprof_command_hash(2, 1, 100, 7, 0x8005, 9) != base);  // the cid's generation bits
  CHECK(ntprof_command_hash(2, 1, 100, 7, 5, 10) != base);
}

TEST_CASE("sampler_identity_leaves_out_the_block_count_and_the_lba_high_dword", "[sampler]") {
  // The kernel hooks load neither (each load costs instructions on every command): the decision
  // must not depend on them, or a side that reads them differently would decide differently.
  const uint64_t base = ntprof_command_hash(2, 1, 100, 7, 5, 9);
  CHECK(ntprof_command_hash(2, 1, 100, 8, 5, 9) == base);
  CHECK(ntprof_command_hash(2, 1, 100 | 1ull << 32, 7, 5, 9) == base);
}

TEST_CASE("sampler_rate_zero_keeps_nothing_and_one_keeps_everything", "[sampler]") {
  CHECK(ntprof_sampled(2, 1, 100, 7, 5, 9, 0) == 0);
  CHECK(ntprof_sampled(2, 1, 100, 7, 5, 9, 1) == 1);
}

TEST_CASE("sampler_rates_nest_under_one_salt", "[sampler]") {
  // Two sessions on one agent share the fleet's salt: every command the coarser rate samples, the
  // finer one samples too, so the agent samples at the finer rate and keeps a subset for the other.
  std::mt19937_64 rng(11);
  const uint64_t salt = 0xfeed;
  int coarse = 0, fine = 0;
  for (int i = 0; i < kCommands; ++i) {
    const uint64_t slba = rng() % (1ull << 30);
    const uint16_t cid = static_cast<uint16_t>(rng() % 128);
    const int at_1000 = ntprof_sampled(0x02, 1, slba, 7, cid, salt, 1000);
    const int at_10 = ntprof_sampled(0x02, 1, slba, 7, cid, salt, 10);
    const int at_7 = ntprof_sampled(0x02, 1, slba, 7, cid, salt, 7);  // not a divisor of 1000
    if (at_1000) REQUIRE(at_10);
    if (at_10) REQUIRE(at_7);
    coarse += at_1000;
    fine += at_10;
  }
  CHECK(static_cast<double>(coarse) / kCommands == Approx(1.0 / 1000).epsilon(0.10));
  CHECK(static_cast<double>(fine) / kCommands == Approx(1.0 / 10).epsilon(0.10));
}

TEST_CASE("sampler_switch_form_takes_the_same_decisions", "[sampler]") {
  // The kernel agent decides with its switch (threshold worked out with the rate) and the salt's
  // key (the hash's salt round done once): the same hash bit for bit and the same decision as
  // ntprof_sampled(), which SPDK's probes and the user-space tools take, at every rate.
  std::mt19937_64 rng(4040);
  const uint32_t rates[] = {0, 1, 2, 3, 7, 10, 100, 1000, 65536, 0xffffffffu};
  int sampled = 0, decisions = 0;
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t salt = (i % 1000 == 0) ? 0 : rng();
    const auto opcode = static_cast<uint8_t>(rng() % 3);
    const auto nsid = static_cast<uint32_t>(1 + rng() % 4);
    const uint64_t slba = rng() % (1ull << 40);
    const auto nlb = static_cast<uint32_t>(rng() % 256);
    const auto cid = static_cast<uint16_t>(rng());
    const uint64_t key = ntprof_salt_key(salt);
    REQUIRE(ntprof_command_hash_keyed(opcode, nsid, slba, nlb, cid, key) ==
            ntprof_command_hash(opcode, nsid, slba, nlb, cid, salt));
    const uint32_t n = rates[i % std::size(rates)];
    const ntprof_sampling_switch sw = ntprof_sampling_switch_for(n);
    const int old_form = ntprof_sampled(opcode, nsid, slba, nlb, cid, salt, n);
    REQUIRE(ntprof_switch_sampled(sw.rate, sw.threshold, opcode, nsid, slba, nlb, cid, key) == old_form);
    sampled += old_form;
    ++decisions;
  }
  CHECK(sampled > decisions / 10);  // both outcomes, at many rates
  CHECK(sampled < decisions);
}
