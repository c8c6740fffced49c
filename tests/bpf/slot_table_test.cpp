// The in-flight slot table as both sides use it: the BPF functions of bpf/ntprof_slots.h run in
// the kernel (BPF_PROG_TEST_RUN) and the agent's SlotTable reads and frees the same array through
// its mmap. Needs root (CAP_BPF); skips (exit 77) otherwise.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "bpf_test_support.h"
#include "ntprof_maps.h"
#include "slot_case.h"
#include "ntprof_sampler.h"  // a type the skeleton names (ntprof_bpf_common.h)
#include "slot_table.h"
#include "slots_check.skel.h"

using ntprof::agent::SlotTable;
using ntprof::testing::SkipUnlessRoot;

namespace {

class SlotsInKernel {
 public:
  SlotsInKernel() : skel_(slots_check__open_and_load()) { REQUIRE(skel_ != nullptr); }
  ~SlotsInKernel() { slots_check__destroy(skel_); }

  slot_case Run(slot_op op, uint64_t key, uint64_t marker = 0) {
    slot_case c{.key = key, .marker = marker, .result = -99, .op = op, .pad = 0};
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof c);
    REQUIRE(bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.slots_check), &opts) == 0);
    return c;
  }
  int64_t InFlight() const {
    // the count's data section, through its mmap (as the agent reads it)
    return skel_->data_ntprof_in_flight->ntprof_sampled_in_flight;
  }
  uint64_t TableFullLosses() const {
    uint32_t cause = NTPROF_LOSS_INFLIGHT_FULL;
    std::vector<uint64_t> per_cpu(libbpf_num_possible_cpus());
    REQUIRE(bpf_map__lookup_elem(skel_->maps.losses, &cause, sizeof cause, per_cpu.data(),
                                 per_cpu.size() * sizeof(uint64_t), 0) == 0);
    uint64_t sum = 0;
    for (uint64_t v : per_cpu) sum += v;
    return sum;
  }
  int table_fd() const { return bpf_map__fd(skel_->maps.inflight); }

 private:
  slots_check* skel_;
};

// Keys that all hash to the home slot of first (request-like addresses, 256 bytes apart).
std::vector<uint64_t> KeysSharingAHome(uint64_t first, size_t count) {
  std::vector<uint64_t> keys{first};
  for (uint64_t k = first + 256; keys.size() < count; k += 256)
    if (ntprof_slot_home(static_cast<uint32_t>(k)) == ntprof_slot_home(static_cast<uint32_t>(first)))
      keys.push_back(k);
  return keys;
}

}  // namespace

TEST_CASE("slots_claimed_in_bpf_are_found_and_freed_by_the_agent_mmap", "[slots][bpf]") {
  SkipUnlessRoot("loading a BPF program needs CAP_BPF");
  SlotsInKernel kernel;
  auto table = SlotTable<ntprof_record_slot>::Of(kernel.table_fd());
  REQUIRE(table.ok());

  const uint64_t rq = 0xffff888012345600ull;
  REQUIRE(kernel.Run(SLOT_PUT, rq, 1111).result == 0);
  CHECK(kernel.InFlight() == 1);
  auto seen = table->Find(rq);
  REQUIRE(seen.has_value());
  CHECK(seen->key == rq);
  CHECK(seen->rec.slba == 1111);

  // A second put of the same key replaces its record in place: still one command in flight.
  REQUIRE(kernel.Run(SLOT_PUT, rq, 2222).result == 0);
  CHECK(kernel.InFlight() == 1);
  CHECK(table->Find(rq)->rec.slba == 2222);

  // The agent's sweep frees the slot: BPF no longer finds it, and a late forget by the command's
  // own completion does not count it out a second time.
  int used = 0;
  uint32_t index = 0;
  table->ForEachUsed([&](uint32_t i, const ntprof_record_slot& s) {
    ++used;
    index = i;
    CHECK(s.key == rq);
  });
  REQUIRE(used == 1);
  CHECK(index == ntprof_slot_home(static_cast<uint32_t>(rq)));
  CHECK(table->Release(index, rq));
  CHECK_FALSE(table->Release(index, rq));  // already free
  CHECK(kernel.Run(SLOT_FIND, rq).result == 0);
  kernel.Run(SLOT_FORGET, rq);
  CHECK(kernel.InFlight() == 1);  // the sweep leaves the count above the table (ntprof_bpf_common.h)
}

TEST_CASE("colliding_keys_take_the_next_slots_until_the_probes_run_out", "[slots][bpf]") {
  SkipUnlessRoot("loading a BPF program needs CAP_BPF");
  SlotsInKernel kernel;
  auto table = SlotTable<ntprof_record_slot>::Of(kernel.table_fd());
  REQUIRE(table.ok());
  std::vector<uint64_t> keys = KeysSharingAHome(0xffff888100000000ull, NTPROF_SLOT_PROBES + 1);

  for (size_t i = 0; i < NTPROF_SLOT_PROBES; ++i)
    REQUIRE(kernel.Run(SLOT_PUT, keys[i], 100 + i).result == 0);
  // one more with the same home finds every probe taken: not tracked, counted
  CHECK(kernel.Run(SLOT_PUT, keys.back(), 999).result == -1);
  CHECK(kernel.TableFullLosses() == 1);
  CHECK(kernel.InFlight() == static_cast<int64_t>(NTPROF_SLOT_PROBES));

  for (size_t i = 0; i < NTPROF_SLOT_PROBES; ++i) {
    slot_case found = kernel.Run(SLOT_FIND, keys[i]);
    CHECK(found.result == 1);
    CHECK(found.marker == 100 + i);
    auto seen = table->Find(keys[i]);
    REQUIRE(seen.has_value());
    CHECK(seen->rec.slba == 100 + i);
  }
  CHECK(kernel.Run(SLOT_FIND, keys.back()).result == 0);

  // Freeing the first slot of the run leaves the later keys findable (lookups never stop at a
  // free slot), and the slot serves the key that could not be tracked before.
  kernel.Run(SLOT_FORGET, keys[0]);
  CHECK(kernel.InFlight() == static_cast<int64_t>(NTPROF_SLOT_PROBES) - 1);
  for (size_t i = 1; i < NTPROF_SLOT_PROBES; ++i) CHECK(kernel.Run(SLOT_FIND, keys[i]).result == 1);
  REQUIRE(kernel.Run(SLOT_PUT, keys.back(), 999).result == 0);
  CHECK(table->Find(keys.back())->rec.slba == 999);
}

TEST_CASE("slot_table_refuses_a_map_that_is_not_an_mmapable_array", "[slots][bpf]") {
  SkipUnlessRoot("creating a BPF map needs CAP_BPF");
  int hash = bpf_map_create(BPF_MAP_TYPE_HASH, "not_slots", 8, sizeof(ntprof_record_slot), 16,
                            nullptr);
  REQUIRE(hash >= 0);
  auto table = SlotTable<ntprof_record_slot>::Of(hash);
  CHECK_FALSE(table.ok());
  CHECK(table.status().message().find("not an mmapable array") != std::string::npos);
  CHECK_FALSE(SlotTable<ntprof_record_slot>::Of(-1).ok());
  close(hash);
}
