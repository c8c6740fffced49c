// The map layouts are shared with the BPF programs through one header (bpf/ntprof_maps.h); these
// asserts catch a change that would make the agent misread what the kernel writes. The record's
// own layout, which is also what travels on the wire, is pinned in core/raw_records.cpp.
#include <cstddef>

#include "ntprof_maps.h"
#include "ntprof_record.h"

static_assert(offsetof(ntprof_record_slot, key) == 0 && offsetof(ntprof_record_slot, rec) == 8);
static_assert(sizeof(ntprof_record_slot) == 8 + NTPROF_RECORD_SIZE);
static_assert(sizeof(ntprof_index_slot) == 16);
static_assert(NTPROF_SLOTS == 1u << NTPROF_SLOT_BITS && NTPROF_SLOT_PROBES <= NTPROF_SLOTS);
static_assert(sizeof(ntprof_subsys_name) == NTPROF_NQN_LEN);
