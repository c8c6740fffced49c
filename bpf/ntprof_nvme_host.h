/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_nvme_host.h - the nvme_core side of every kernel host transport (host_tcp.bpf.c,
 * host_rdma.bpf.c), on top of ntprof_host_block.h:
 *
 *   H0  rq->start_time_ns, read at H1
 *   H1  tracepoint nvme:nvme_setup_cmd         sampling decision (cid is assigned just before)
 *   H4  tracepoint nvme:nvme_complete_rq       (by struct request *, so R2T writes are fine);
 *   H5  tracepoint block:block_rq_complete     the record is emitted here
 * and the (controller, qid, cid) -> request index through which the transport's hooks find a
 * command. Devices are namespace heads (nvme0n1) even with native multipath, where requests run
 * on hidden path disks that have no dev_t in sysfs.
 *
 * Define NTPROF_HOST_TRANSPORT (enum ntprof_transport) and include after ntprof_host_block.h.
 * The including object defines host_command_sampled(rq): what its transport notes of a command
 * it has just begun to track (NVMe/TCP: where the command's PDU headers are built).
 */
#ifndef NTPROF_NVME_HOST_H
#define NTPROF_NVME_HOST_H

#ifndef NTPROF_HOST_TRANSPORT
#error "define NTPROF_HOST_TRANSPORT before including ntprof_nvme_host.h"
#endif

static __always_inline void host_command_sampled(struct request *rq);

/* cid index: the wire (a PDU, an RDMA completion) names a command by (queue, cid); the in-flight
 * table is keyed by request. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_INFLIGHT);
	__type(key, struct ntprof_host_cid_key);
	__type(value, __u64);
} cid_index SEC(".maps");

static __always_inline void *nvme_req_of(struct request *rq)
{
	return (void *)rq + bpf_core_type_size(struct request); /* blk_mq_rq_to_pdu() */
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

static __always_inline struct ntprof_record *host_lookup_cid(__u32 ctrl, __u16 qid, __u16 cid)
{
	struct ntprof_host_cid_key k = { .ctrl = ctrl, .qid = qid, .cid = cid };
	__u64 *rq;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	rq = bpf_map_lookup_elem(&cid_index, &k);
	return rq ? host_lookup_request((struct request *)*rq) : NULL;
}

/* ---- H0/H1: nvme_setup_cmd, the sampling decision ---- */
static __always_inline int on_nvme_setup_cmd(struct request *rq, void *cmd, bool typed)
{
	struct nvme_request___ntprof *nreq = nvme_req_of(rq);
	struct ntprof_sqe sqe;
	__u32 dev;

	if (ntprof_get_sqe(typed, cmd, &sqe) || sqe.opcode == NTPROF_OPC_FABRICS)
		return 0;
	if (!ntprof_is_sampled(sqe.opcode, sqe.nsid, sqe.slba, sqe.nlb, sqe.cid))
		return 0;
	/* sampled: only now pay for the rest */
	dev = nvme_rq_dev(rq, typed);
	if (!dev || !ntprof_dev_watched(dev))
		return 0; /* an admin command (nvme_req_qid() == 0), or not a watched namespace */

	struct ntprof_record init = {
		.slba = sqe.slba,
		.nsid = sqe.nsid,
		.nlb = sqe.nlb,
		.ctrl = BPF_CORE_READ(nreq, ctrl, instance),
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

	struct ntprof_host_cid_key k = { .ctrl = init.ctrl, .qid = init.qid, .cid = init.cid };
	__u64 v = (__u64)rq;
	if (bpf_map_update_elem(&cid_index, &k, &v, BPF_ANY)) {
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
		host_forget_request(rq);
		return 0;
	}
	host_command_sampled(rq);
	return 0;
}

NTPROF_TRACEPOINT_HOOK(nvme_setup_cmd, (struct request *rq, void *cmd), rq,
		       on_nvme_setup_cmd(rq, cmd, ntprof_typed))

/* ---- H4: nvme_complete_rq ---- */
static __always_inline int on_nvme_complete_rq(struct request *rq)
{
	struct nvme_request___ntprof *nreq = nvme_req_of(rq);
	struct ntprof_record *rec = host_lookup_request(rq); /* an unsampled command: this lookup only */

	if (!rec)
		return 0;
	rec->stamps[NTPROF_H4_DRIVER_DONE] = bpf_ktime_get_ns();
	rec->status = BPF_CORE_READ(nreq, status);
	if (rec->status)
		rec->flags |= NTPROF_F_ERROR;
	return 0;
}

NTPROF_TRACEPOINT_HOOK(nvme_complete_rq, (struct request *rq), rq, on_nvme_complete_rq(rq))

/* ---- H5: block_rq_complete, emit ---- */
static __always_inline int on_block_rq_complete(struct request *rq)
{
	struct ntprof_record *rec = host_block_done(rq);

	if (!rec)
		return 0;
	ntprof_emit(rec);
	struct ntprof_host_cid_key k = { .ctrl = rec->ctrl, .qid = rec->qid, .cid = rec->cid };
	bpf_map_delete_elem(&cid_index, &k);
	host_forget_request(rq);
	return 0;
}

NTPROF_TRACEPOINT_HOOK(block_rq_complete, (struct request *rq, int error, unsigned int nr_bytes),
		       rq, on_block_rq_complete(rq))

#endif /* NTPROF_NVME_HOST_H */
