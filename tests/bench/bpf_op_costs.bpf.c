// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf_op_costs.bpf.c - what each kind of operation the agent's programs do costs on this CPU: one
 * program per operation, each doing it OPS times in a loop (tests/bench/bpf_op_costs.cpp runs them
 * with BPF_PROG_TEST_RUN and subtracts the empty program). Under emulation the figures say which
 * operations a hook should avoid; on a real CPU they are the same table for comparison.
 *
 * Each loop's input changes with the iteration and its result is kept in `sink`, so the compiler
 * can neither hoist nor drop the operation.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "ntprof_sampler.h"
#include "ntprof_record.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define OPS 16

volatile __u64 sink = 0;
volatile __u64 seed = 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct ntprof_record);
} array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} ring SEC(".maps");

#define OP_PROGRAM(name, body)                          \
	SEC("tc")                                       \
	int name(struct __sk_buff *skb)                 \
	{                                               \
		__u64 acc = seed;                       \
		for (__u32 i = 0; i < OPS; i++) {       \
			body;                           \
		}                                       \
		sink = acc;                             \
		return 0;                               \
	}

OP_PROGRAM(empty, acc += i)
OP_PROGRAM(sampling_hash, acc += ntprof_command_hash(2, 1, acc + i, 7, (__u16)i, 12345))
OP_PROGRAM(sampling_decision, acc += ntprof_sampled(2, 1, acc + i, 7, (__u16)i, 12345, 100))
OP_PROGRAM(ktime, acc += bpf_ktime_get_ns())
OP_PROGRAM(array_lookup, ({
	__u32 k = i & 63;
	struct ntprof_record *v = bpf_map_lookup_elem(&array, &k);
	if (v)
		acc += v->slba;
}))
OP_PROGRAM(percpu_lookup, ({
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&percpu, &k);
	if (v)
		acc += *v;
}))
OP_PROGRAM(hash_lookup, ({
	__u64 k = i;
	__u64 *v = bpf_map_lookup_elem(&hash, &k);
	if (v)
		acc += *v;
}))
OP_PROGRAM(lru_lookup, ({
	__u64 k = i;
	__u64 *v = bpf_map_lookup_elem(&lru, &k);
	if (v)
		acc += *v;
}))
OP_PROGRAM(hash_update, ({
	__u64 k = i;
	bpf_map_update_elem(&hash, &k, &acc, BPF_ANY);
}))
OP_PROGRAM(probe_read_12, ({
	__u8 b[12];
	if (!bpf_probe_read_kernel(b, sizeof(b), (void *)&sink))
		acc += b[0] + b[11];
}))
OP_PROGRAM(cmpxchg, ({
	__u32 k = 0;
	struct ntprof_record *v = bpf_map_lookup_elem(&array, &k);
	if (v)
		acc += __sync_val_compare_and_swap(&v->slba, acc, acc + 1);
}))
OP_PROGRAM(record_copy, ({
	__u32 k = i & 63;
	struct ntprof_record *v = bpf_map_lookup_elem(&array, &k);
	struct ntprof_record r;
	__builtin_memset(&r, 0, sizeof(r));
	r.slba = acc;
	if (v) {
		*v = r;
		acc += v->nlb;
	}
}))
OP_PROGRAM(ringbuf_output, ({
	__u32 k = 0;
	struct ntprof_record *v = bpf_map_lookup_elem(&array, &k);
	if (v)
		acc += bpf_ringbuf_output(&ring, v, sizeof(*v), BPF_RB_NO_WAKEUP);
}))
