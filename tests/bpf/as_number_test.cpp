// ntprof_as_number, which the typed programs use to compute addresses from trusted pointers (a PDU
// buffer from its SQE, a page's address), in this kernel's verifier and on real requests: the
// block_rq_issue events of O_DIRECT writes to a loop device.
#include <catch2/catch.hpp>
#include <vector>

#include "ntprof_sampler.h"  // a type the skeleton names (ntprof_bpf_common.h)
#include "as_number_check.skel.h"
#include "loop_device.h"

namespace {

constexpr uint32_t kBlock = 4096;
constexpr int kWrites = 32;

TEST_CASE("a typed pointer negated twice is its own address, as a number") {
  ntprof::testing::LoopDevice loop(kWrites * 2 * kBlock);
  as_number_check* skel = as_number_check__open_and_load();
  REQUIRE(skel);  // the verifier accepts the negation of a trusted pointer
  REQUIRE(as_number_check__attach(skel) == 0);
  std::vector<uint64_t> offsets;
  for (int i = 0; i < kWrites; ++i) offsets.push_back(uint64_t(2 * i) * kBlock);  // no merging
  REQUIRE(loop.DirectIo(offsets, kBlock, /*write=*/true));
  as_number_check__detach(skel);
  CHECK(skel->bss->runs >= static_cast<uint64_t>(kWrites));
  CHECK(skel->bss->wrong_bits == 0);
  CHECK(skel->bss->wrong_address == 0);
  as_number_check__destroy(skel);
}

}  // namespace
