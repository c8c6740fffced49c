/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_host_block.h - the host's block-layer side, shared by host_tcp.bpf.c (NVMe/TCP namespaces)
 * and local_block.bpf.c (any local block device): the in-flight table keyed by struct request *,
 * H0 from the request's start time and H5 at block_rq_complete. (Throughput comes from the
 * kernel's own block statistics, read by the agent: no program counts unsampled commands.)
 *
 * Include after ntprof_bpf_common.h.
 */
#ifndef NTPROF_HOST_BLOCK_H
#define NTPROF_HOST_BLOCK_H

#include "ntprof_slots.h"

/* Sampled commands in flight, keyed by their struct request *. Only sampled commands get a slot;
 * slots of commands that never complete are swept by the agent (counted as evicted). */
NTPROF_SLOT_TABLE(inflight, struct ntprof_record_slot);

/* Whether rec, the entry rq already has, is this same command issued again (requeued or retried)
 * rather than an earlier one.
 *
 * A request is only handed to a new command after the old one completed, so an entry whose
 * rq->start_time_ns (H0, set when the request was allocated) differs belongs to a command whose
 * completion hook never ran. The kernel does skip a tracepoint's BPF program now and then without
 * counting a recursion miss (measured: about 1 loop-device completion in 100,000-300,000 on 6.18),
 * so that command is counted as lost instead of being merged into the new one. Without I/O
 * statistics H0 is 0 and the start sector tells the commands apart. */
static __always_inline bool host_same_command(const struct ntprof_record *rec, struct request *rq,
					      bool typed)
{
	__u64 allocated = NTPROF_READ(typed, rq, start_time_ns);

	if (allocated ? rec->stamps[NTPROF_H0_BLOCK_START] == allocated
		      : rec->slba == NTPROF_READ(typed, rq, __sector))
		return true;
	ntprof_lose(NTPROF_LOSS_COMPLETION_MISSED);
	return false;
}

/* Start tracking a sampled request: identity fields are the caller's, block fields are set here.
 * When the request already has an entry, a stale one is counted and replaced; this same command
 * issued again (a retry or requeue) is stamped afresh, or kept with its first stamps when
 * keep_reissued. typed: see NTPROF_READ.
 * Returns 0 when the command is tracked, non-zero when the table is full (counted). */
static __always_inline long host_track_request(struct request *rq, struct ntprof_record *init,
					       bool keep_reissued, bool typed)
{
	__u64 key = (__u64)rq;
	struct ntprof_record *known = ntprof_inflight_find(&inflight, key);

	if (known && host_same_command(known, rq, typed) && keep_reissued)
		return 0;
	init->role = NTPROF_ROLE_HOST;
	init->stack = NTPROF_STACK_KERNEL;
	init->bytes = NTPROF_READ(typed, rq, __data_len);
	/* rq->start_time_ns is ktime_get_ns() at allocation, the clock of bpf_ktime_get_ns; it is 0
	 * when the queue keeps no I/O statistics (then H0 stays "not seen"). */
	init->stamps[NTPROF_H0_BLOCK_START] = NTPROF_READ(typed, rq, start_time_ns);
	return ntprof_inflight_put(&inflight, key, init);
}

static __always_inline struct ntprof_record *host_lookup_request(struct request *rq)
{
	return ntprof_inflight_find(&inflight, (__u64)rq);
}

/* block_rq_complete: if the request is a sampled one, stamp H5 and return its entry (the caller
 * emits it and forgets the command). */
static __always_inline struct ntprof_record *host_block_done(struct request *rq)
{
	struct ntprof_record *rec = host_lookup_request(rq);

	if (rec)
		rec->stamps[NTPROF_H5_BLOCK_DONE] = bpf_ktime_get_ns();
	return rec;
}

static __always_inline void host_forget_request(struct request *rq)
{
	ntprof_inflight_forget(&inflight, (__u64)rq);
}

#endif /* NTPROF_HOST_BLOCK_H */
