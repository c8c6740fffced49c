/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_nvme_host.h - the nvme_core side of every kernel host transport (host_tcp.bpf.c,
 * host_rdma.bpf.c), on top of ntprof_host_block.h:
 *
 *   H0  rq->start_time_ns, read at H1
 *   H1  tracepoint nvme:nvme_setup_cmd         sampling decision (cid is assigned just before)
 *   H4  = H5: nvme_complete_rq ends the request in the same call chain (one program
 *       run per I/O less; the status is read at H5)
 *   H5  tracepoint block:block_rq_complete     the record is emitted here
 * and the (controller, qid, cid) -> request index through which the transport's hooks find a
 * command. Devices are namespace heads (nvme0n1) even with native multipath, where requests run
 * on hidden path disks that have no dev_t in sysfs.
 *
 * Define NTPROF_HOST_TRANSPORT (enum ntprof_transport) and include after ntprof_host_block.h.
 * The including object defines host_command_sampled(rq, cmd): what its transport notes of a
 * command it has just begun to track (NVMe/TCP: where the command's PDU headers are built); cmd
 * is the tracepoint's SQE pointer (nvme_req(rq)->cmd).
 */
#ifndef NTPROF_NVME_HOST_H
#define NTPROF_NVME_HOST_H

#ifndef NTPROF_HOST_TRANSPORT
#error "define NTPROF_HOST_TRANSPORT before including ntprof_nvme_host.h"
#endif

static __always_inline void host_command_sampled(struct request *rq, const void *cmd);

/* cid index: the wire (a PDU, an RDMA completion) names a command by (queue, cid); the in-flight
 * table is keyed by request. A slot holds ntprof_cid_key_packed() -> struct request *. */
NTPROF_SLOT_TABLE(cid_index, struct ntprof_index_slot);

static __always_inline void *nvme_req_of(struct request *rq)
{
	return (void *)rq + bpf_core_type_size(struct request); /* blk_mq_rq_to_pdu() */
}

/* The request whose driver data is at pdu, a number (blk_mq_rq_from_pdu()). */
static __always_inline struct request *nvme_rq_of_pdu(__u64 pdu)
{
	return (struct request *)(pdu - bpf_core_type_size(struct request));
}

/* The namespace device an I/O request is for, as users name it: with native multipath the request
 * runs on a hidden path disk (nvme0c0n1, no dev_t in sysfs), so take the head's disk (nvme0n1).
 * 0 for admin and fabrics requests (no namespace). queuedata is a void *: the namespace's fields
 * are probe reads in every variant. */
static __always_inline __u32 nvme_rq_dev(struct request *rq, bool typed)
{
	struct nvme_ns___ntprof *ns = NTPROF_READ(typed, rq, q, queuedata);
	struct nvme_ns_head___ntprof *head;
	struct gendisk *disk = NULL;

	if (!ns)
		return 0;
	head = BPF_CORE_READ(ns, head);
	if (head && bpf_core_field_exists(head->disk))
		disk = BPF_CORE_READ(head, disk);
	if (!disk)
		disk = BPF_CORE_READ(ns, disk);
	return disk ? ntprof_disk_dev(disk, false) : 0;
}

/* What a sampled command needs of its request queue's namespace: a slot of host_queues. */
struct host_queue_slot {
	__u64 key;     /* struct request_queue *; 0 = free */
	__u64 diskseq; /* of the queue's own disk: never reused while the system runs; 0 = being set */
	__u32 dev;     /* nvme_rq_dev() */
	__u32 ctrl;    /* nvmeN instance */
	__u32 watched_generation; /* of the watched set that `watched` was taken from */
	__u32 watched; /* whether dev is in watched_devs */
};

/* Request queue -> its namespace's device and controller, and whether the agent watches it.
 * Found afresh, they cost six probe reads through void * fields (queuedata, the driver data after
 * the request), about 8 us each under emulation, and a hash lookup of the watched set; a queue
 * keeps them for its life. Slots in an array, as the in-flight tables (ntprof_slots.h): a sampled
 * command reads its queue's without a kernel call. An entry counts only while its disk's diskseq
 * matches, so a queue freed and its address reused by another namespace is read afresh, and while
 * its watched generation is the agent's current one (it counts the watched set's changes). */
NTPROF_SLOT_ARRAY(host_queues, struct host_queue_slot);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} watched_generation SEC(".maps");

/* The namespace of rq's queue: its device and controller in *dev and *ctrl. false for admin and
 * fabrics requests, and for namespaces the agent does not watch. */
static __always_inline bool host_watched_queue(struct request *rq, bool typed, __u32 *dev,
					       __u32 *ctrl)
{
	struct request_queue *q = NTPROF_READ(typed, rq, q);
	struct nvme_request___ntprof *nreq = nvme_req_of(rq);
	struct gendisk *disk = q ? NTPROF_READ(typed, q, disk) : NULL;
	__u64 diskseq = disk && bpf_core_field_exists(disk->diskseq)
				? NTPROF_READ(typed, disk, diskseq)
				: 0;
	__u32 zero = 0;
	__u32 *generation = bpf_map_lookup_elem(&watched_generation, &zero);
	struct host_queue_slot *s;
	__u32 gen, watched;

	if (!generation)
		return false;
	/* read before the watched set: an entry taken from a set the agent then changes is stale */
	gen = *generation;
	s = diskseq ? (struct host_queue_slot *)ntprof_slot_find(&host_queues, (__u64)q) : NULL;
	if (s && s->diskseq == diskseq && s->watched_generation == gen) {
		*dev = s->dev;
		*ctrl = s->ctrl;
		return s->watched;
	}
	*dev = nvme_rq_dev(rq, typed);
	if (!*dev)
		return false;
	*ctrl = BPF_CORE_READ(nreq, ctrl, instance);
	watched = ntprof_dev_watched(*dev);
	if (!diskseq) /* without it (before Linux 5.15) an entry could not be checked */
		return watched;
	if (!s)
		s = (struct host_queue_slot *)ntprof_slot_claim(&host_queues, (__u64)q);
	if (s) {
		/* diskseq last: a reader that matches it finds the other fields set */
		s->diskseq = 0;
		NTPROF_COMPILER_BARRIER();
		s->dev = *dev;
		s->ctrl = *ctrl;
		s->watched_generation = gen;
		s->watched = watched;
		NTPROF_COMPILER_BARRIER();
		s->diskseq = diskseq;
	}
	return watched;
}

static __always_inline struct ntprof_record *host_lookup_cid(__u32 ctrl, __u16 qid, __u16 cid)
{
	struct ntprof_index_slot *s;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	s = (struct ntprof_index_slot *)ntprof_slot_find(&cid_index,
							  ntprof_cid_key_packed(ctrl, qid, cid));
	return s ? host_lookup_request((struct request *)s->value) : NULL;
}

/* Indexes the sampled command rq by its (controller, qid, cid): 0, or -1 when no slot is free. A
 * slot the key already has (a retried command's, or one the agent has not swept yet) is reused. */
static __always_inline long host_index_cid(const struct ntprof_record *rec, struct request *rq)
{
	__u64 key = ntprof_cid_key_packed(rec->ctrl, rec->qid, rec->cid);
	struct ntprof_index_slot *s = (struct ntprof_index_slot *)ntprof_slot_find(&cid_index, key);

	if (!s)
		s = (struct ntprof_index_slot *)ntprof_slot_claim(&cid_index, key);
	if (!s)
		return -1;
	s->value = (__u64)rq;
	return 0;
}

static __always_inline void host_unindex_cid(const struct ntprof_record *rec)
{
	__u64 key = ntprof_cid_key_packed(rec->ctrl, rec->qid, rec->cid);
	__u64 *slot = ntprof_slot_find(&cid_index, key);

	if (slot)
		ntprof_slot_release(slot, key);
}

/* ---- H0/H1: nvme_setup_cmd, the sampling decision ---- */
static __always_inline int on_nvme_setup_cmd(struct request *rq, void *cmd, bool typed)
{
	struct ntprof_sqe sqe;
	__u32 dev, ctrl;

	if (!ntprof_sampled_sqe(cmd, &sqe, typed))
		return 0;
	/* sampled: only now pay for the rest */
	if (!host_watched_queue(rq, typed, &dev, &ctrl))
		return 0; /* an admin command (nvme_req_qid() == 0), or not a watched namespace */

	struct ntprof_record init = {
		.slba = sqe.slba,
		.nsid = sqe.nsid,
		.nlb = sqe.nlb,
		.ctrl = ctrl,
		.dev = dev,
		.flags = ntprof_opcode_is_write(sqe.opcode) ? NTPROF_F_WRITE : 0,
		.qid = NTPROF_READ(typed, rq, mq_hctx, queue_num) + 1,
		.cid = sqe.cid,
		.opcode = sqe.opcode,
		.transport = NTPROF_HOST_TRANSPORT,
	};
	init.stamps[NTPROF_H1_DRIVER_SUBMIT] = bpf_ktime_get_ns();
	/* a retry is stamped afresh; a stale earlier command is counted */
	if (host_track_request(rq, &init, false, typed))
		return 0;

	if (host_index_cid(&init, rq)) {
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
		host_forget_request(rq);
		return 0;
	}
	host_command_sampled(rq, cmd);
	return 0;
}

NTPROF_DECIDING_TRACEPOINT_HOOK(nvme_setup_cmd, (struct request *rq, void *cmd), rq, cmd,
				on_nvme_setup_cmd(rq, cmd, ntprof_typed))

/* ---- H4, H5: block_rq_complete, emit ----
 * nvme_complete_rq, where nvme:nvme_complete_rq fires, ends a completed request in the same call
 * chain with no queue between (nvme_end_req -> blk_mq_end_request -> blk_update_request, where
 * block:block_rq_complete fires): a few hundred instructions, no wait. One program there instead
 * of two saves a program run per I/O, every I/O (docs/overhead.md, "The second cut"), so H4 is
 * stamped here with H5 and the status is read here: nvme_req(rq)->status is still the CQE's
 * (a failover ends the path's request with the path error in it; a retry requeues the request
 * without this tracepoint and is stamped afresh at H1). */
static __always_inline int on_block_rq_complete(struct request *rq)
{
	struct ntprof_record *rec = host_block_done(rq);
	struct nvme_request___ntprof *nreq;

	if (!rec)
		return 0;
	rec->stamps[NTPROF_H4_DRIVER_DONE] = rec->stamps[NTPROF_H5_BLOCK_DONE];
	nreq = nvme_req_of(rq);
	rec->status = BPF_CORE_READ(nreq, status);
	if (rec->status)
		rec->flags |= NTPROF_F_ERROR;
	ntprof_emit(rec);
	host_unindex_cid(rec);
	host_forget_request(rq);
	return 0;
}

NTPROF_STAMPING_TRACEPOINT_HOOK(block_rq_complete, (struct request *rq, int error, unsigned int nr_bytes),
		       rq, on_block_rq_complete(rq))

#endif /* NTPROF_NVME_HOST_H */
