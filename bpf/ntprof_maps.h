/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_maps.h - the layouts of the BPF maps that user space reads or writes, besides the record
 * itself (ntprof_record.h). Included by the BPF programs (after vmlinux.h) and by the agent in
 * daemon/, which static_asserts the sizes (daemon/record_layout.cpp).
 */
#ifndef NTPROF_MAPS_H
#define NTPROF_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "ntprof_record.h"

/* Why a command or a stamp was lost in the kernel; index of the per-CPU "losses" array. */
enum ntprof_loss_cause {
	NTPROF_LOSS_RINGBUF_FULL = 0,   /* record dropped: ring buffer full (user space too slow) */
	NTPROF_LOSS_INFLIGHT_FULL = 1,  /* sampled command not tracked: in-flight table full */
	NTPROF_LOSS_SOCKET_TABLE_FULL = 2, /* NVMe/TCP host: a socket's entry pushed another's out
					 * of the socket table (all its slots taken); a sampled command
					 * in flight on that one misses its receive stamps */
	NTPROF_LOSS_COMPLETION_MISSED = 3, /* a sampled command's completion hook never ran: found
					 * when the block layer handed its request to a new command */
	NTPROF_LOSS_CAUSES = 4,
};

/* ---- in-flight tables as arrays of slots (bpf/ntprof_slots.h) ----
 * A sampled command's entry lives in a slot of an array map, found by hashing its key (a request
 * pointer, or a host's packed (controller, qid, cid)) to a home slot and trying NTPROF_SLOT_PROBES
 * slots from there. Key 0 marks a free slot. An array lookup is a few instructions the verifier
 * inlines; a hash map's insert, lookup and delete are each a kernel call with a bucket lock, and a
 * sampled command made about ten of them. The agent reads and frees stale slots through an mmap
 * of the array (daemon/slot_table.h), with the same hash. */
#define NTPROF_SLOT_BITS 14
#define NTPROF_SLOTS (1u << NTPROF_SLOT_BITS)
#define NTPROF_SLOT_PROBES 4

struct ntprof_record_slot {
	__u64 key; /* struct request * (host), struct nvmet_req * (target); 0 = free */
	struct ntprof_record rec;
};

struct ntprof_index_slot {
	__u64 key;   /* ntprof_cid_key_packed(); 0 = free */
	__u64 value; /* struct request * */
};

/* A key's first slot: Fibonacci hashing of the key's low 32 bits (the top bits of key_low times
 * 2^32 / phi). Requests sit in arrays at a fixed stride, which this spreads over the whole table.
 * Only the low half: a BTF-typed program may copy a pointer into a 32-bit register, but it may do
 * no other arithmetic on it (the high half of a kernel pointer hardly varies anyway). */
static inline __u32 ntprof_slot_home(__u32 key_low)
{
	return (key_low * 0x9E3779B9u) >> (32 - NTPROF_SLOT_BITS);
}

/* The host's cid index key (controller instance, qid, cid: how the wire names a command) as one
 * non-zero number (I/O queues have qid >= 1). */
static inline __u64 ntprof_cid_key_packed(__u32 ctrl, __u16 qid, __u16 cid)
{
	return (__u64)ctrl << 32 | (__u64)qid << 16 | cid;
}

/* Target: agent-local subsystem id -> subsystem NQN (filled once per subsystem by BPF). */
#define NTPROF_NQN_LEN 256
struct ntprof_subsys_name {
	char nqn[NTPROF_NQN_LEN];
};

/* Sizes of the bounded tables (user space sweeps commands that never complete). */
#define NTPROF_MAX_DEVICES 256
#define NTPROF_MAX_SUBSYS 64

#endif /* NTPROF_MAPS_H */
