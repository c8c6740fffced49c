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

/* Sampled commands in flight, keyed by their struct request *. Only sampled commands get an entry;
 * entries of commands that never complete are swept by the agent (counted as evicted). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct ntprof_record);
} inflight SEC(".maps");

/* The in-flight entry of an earlier issue of this same command (requeued or retried), or NULL.
 *
 * A request is only handed to a new command after the old one completed, so an entry whose
 * rq->start_time_ns (H0, set when the request was allocated) differs belongs to a command whose
 * completion hook never ran. The kernel does skip a tracepoint's BPF program now and then without
 * counting a recursion miss (measured: about 1 loop-device completion in 100,000-300,000 on 6.18),
 * so that command is counted as lost instead of being merged into the new one. Without I/O
 * statistics H0 is 0 and the start sector
 * tells the commands apart. */
static __always_inline struct ntprof_record *host_same_command(struct request *rq, bool typed)
{
	__u64 key = (__u64)rq;
	struct ntprof_record *rec = bpf_map_lookup_elem(&inflight, &key);
	__u64 allocated;

	if (!rec)
		return NULL;
	allocated = NTPROF_READ(typed, rq, start_time_ns);
	if (allocated ? rec->stamps[NTPROF_H0_BLOCK_START] == allocated
		      : rec->slba == NTPROF_READ(typed, rq, __sector))
		return rec;
	ntprof_lose(NTPROF_LOSS_COMPLETION_MISSED);
	ntprof_in_flight_delete(&inflight, &key);
	return NULL;
}

/* Start tracking a sampled request: identity fields are the caller's, block fields are set here.
 * The common case is one map operation, the insert: only when the request already has an entry is
 * that entry looked at (host_same_command). A stale one is counted and replaced; this same command
 * issued again (a retry or requeue) is stamped afresh, or kept with its first stamps when
 * keep_reissued. typed: see NTPROF_READ. A lookup before the insert and one after it, as this was
 * first written, were two of the five hash operations a sampled command cost
 * (tests/bench/native_sampled_path.py).
 * Returns 0 when the command is tracked, non-zero when the table is full (counted). */
static __always_inline long host_track_request(struct request *rq, struct ntprof_record *init,
					       bool keep_reissued, bool typed)
{
	__u64 key = (__u64)rq;
	long err;

	init->role = NTPROF_ROLE_HOST;
	init->stack = NTPROF_STACK_KERNEL;
	init->bytes = NTPROF_READ(typed, rq, __data_len);
	/* rq->start_time_ns is ktime_get_ns() at allocation, the clock of bpf_ktime_get_ns; it is 0
	 * when the queue keeps no I/O statistics (then H0 stays "not seen"). */
	init->stamps[NTPROF_H0_BLOCK_START] = NTPROF_READ(typed, rq, start_time_ns);
	ntprof_in_flight_add(1);
	err = bpf_map_update_elem(&inflight, &key, init, BPF_NOEXIST);
	if (err == -NTPROF_EEXIST) {
		ntprof_in_flight_add(-1); /* the entry there is counted already */
		if (host_same_command(rq, typed) && keep_reissued)
			return 0;
		/* a stale entry is gone now: a fresh insert; the same command's is replaced */
		err = ntprof_in_flight_insert(&inflight, &key, init);
	} else if (err) {
		ntprof_in_flight_add(-1);
	}
	if (err)
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
	return err;
}

static __always_inline struct ntprof_record *host_lookup_request(struct request *rq)
{
	__u64 key = (__u64)rq;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	return bpf_map_lookup_elem(&inflight, &key);
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
	__u64 key = (__u64)rq;

	ntprof_in_flight_delete(&inflight, &key);
}

#endif /* NTPROF_HOST_BLOCK_H */
