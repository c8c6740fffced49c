// The record and map layouts are shared with the BPF programs through one header each
// (bpf/ntprof_record.h, bpf/ntprof_maps.h); these asserts catch a change that would make the
// agent misread what the kernel writes.
#include <cstddef>

#include "ntprof/v1/record.pb.h"
#include "ntprof_maps.h"
#include "ntprof_record.h"

static_assert(sizeof(ntprof_record) == NTPROF_RECORD_SIZE, "ntprof_record size changed");
static_assert(offsetof(ntprof_record, stamps) == 0);
static_assert(offsetof(ntprof_record, slba) == 128);
static_assert(offsetof(ntprof_record, nsid) == 136);
static_assert(offsetof(ntprof_record, nlb) == 140);
static_assert(offsetof(ntprof_record, bytes) == 144);
static_assert(offsetof(ntprof_record, ctrl) == 148);
static_assert(offsetof(ntprof_record, dev) == 152);
static_assert(offsetof(ntprof_record, flags) == 156);
static_assert(offsetof(ntprof_record, qid) == 160);
static_assert(offsetof(ntprof_record, cid) == 162);
static_assert(offsetof(ntprof_record, status) == 164);
static_assert(offsetof(ntprof_record, opcode) == 166);
static_assert(offsetof(ntprof_record, role) == 167);
static_assert(offsetof(ntprof_record, transport) == 168);
static_assert(offsetof(ntprof_record, stack) == 169);
static_assert(offsetof(ntprof_record, subsys) == 172);
static_assert(NTPROF_HOST_STAMPS <= NTPROF_MAX_STAMPS && NTPROF_TARGET_STAMPS <= NTPROF_MAX_STAMPS);

static_assert(offsetof(ntprof_record_slot, key) == 0 && offsetof(ntprof_record_slot, rec) == 8);
static_assert(sizeof(ntprof_record_slot) == 8 + NTPROF_RECORD_SIZE);
static_assert(sizeof(ntprof_index_slot) == 16);
static_assert(NTPROF_SLOTS == 1u << NTPROF_SLOT_BITS && NTPROF_SLOT_PROBES <= NTPROF_SLOTS);
static_assert(sizeof(ntprof_subsys_name) == NTPROF_NQN_LEN);

// The record's role and stack are copied into the v1 record as they are (the transport: its
// static_asserts are beside the transport registry's rows, transports.cpp).
static_assert(int{NTPROF_ROLE_UNKNOWN} == ntprof::v1::ROLE_UNKNOWN);
static_assert(int{NTPROF_ROLE_HOST} == ntprof::v1::ROLE_HOST);
static_assert(int{NTPROF_ROLE_TARGET} == ntprof::v1::ROLE_TARGET);
static_assert(int{NTPROF_STACK_KERNEL} == ntprof::v1::STACK_KERNEL);
static_assert(int{NTPROF_STACK_SPDK} == ntprof::v1::STACK_SPDK);
static_assert(int{NTPROF_STACK_USERSPACE} == ntprof::v1::STACK_USERSPACE);
