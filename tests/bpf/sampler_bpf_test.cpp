#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <catch2/catch.hpp>
#include <random>

#include "bpf_test_support.h"
#include "ntprof_sampler.h"
#include "sampler_case.h"
#include "sampler_check.skel.h"

using ntprof::testing::SkipUnlessRoot;

TEST_CASE("sampler_takes_identical_decisions_in_bpf_and_user_space", "[sampler][bpf]") {
  SkipUnlessRoot("loading a BPF program needs CAP_BPF");
  sampler_check* skel = sampler_check__open_and_load();
  REQUIRE(skel != nullptr);
  const int prog = bpf_program__fd(skel->progs.sampler_check);
  std::mt19937_64 rng(2024);
  int sampled = 0;
  const int cases = 20'000;
  for (int i = 0; i < cases; ++i) {
    sampler_case c{};
    c.opcode = static_cast<unsigned char>(rng() % 3);
    c.nsid = 1 + static_cast<unsigned>(rng() % 4);
    c.slba = rng() % (1ull << 40);
    c.nlb = static_cast<unsigned>(rng() % 256);
    c.cid = static_cast<unsigned short>(rng());
    c.salt = rng();
    c.n = (i % 3 == 0) ? 1 + static_cast<unsigned>(rng() % 5) : 1 + static_cast<unsigned>(rng() % 1000);
    c.threshold = ntprof_sampling_switch_for(c.n).threshold;  // the agent's, set with the rate
    // A syscall program's context is copied back to ctx_in when it returns.
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof c);
    REQUIRE(bpf_prog_test_run_opts(prog, &opts) == 0);
    REQUIRE(c.hash == ntprof_command_hash(c.opcode, c.nsid, c.slba, c.nlb, c.cid, c.salt));
    REQUIRE(c.sampled == static_cast<unsigned>(
                             ntprof_sampled(c.opcode, c.nsid, c.slba, c.nlb, c.cid, c.salt, c.n)));
    sampled += static_cast<int>(c.sampled);
  }
  CHECK(sampled > 0);  // both outcomes were exercised
  CHECK(sampled < cases);
  sampler_check__destroy(skel);
}
