/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_nvmet_target.h - the nvmet core side of every kernel target transport (target_tcp.bpf.c,
 * target_rdma.bpf.c): the in-flight table keyed by (sq, cid) from the capsule on, the index by
 * struct nvmet_req *, the subsystem ids, and the hooks in nvmet core and the backing block device:
 *
 *   T1  nvmet_req_init (tracepoint / function)
 *   T2  nvmet_bdev_execute_rw / nvmet_file_execute_rw entry (handed to the backend)
 *   T3  nvmet_req_complete (tracepoint / function)
 *   T4  the transport's queue_response entry after T3 (target_queue_response())
 *   drive issue/done: block_rq_issue/complete of the request whose bio carries the nvmet_req
 *
 * Include after ntprof_bpf_common.h. The transport's object creates a command with
 * target_track_capsule() at T0 (or target_track_command() with its T0, at T1) and emits it with
 * its last stamp, and defines
 *   target_command_arrives(req, sq, sqe): at nvmet_req_init, before anything else (NVMe/TCP: T0
 *       and the sampling decision are taken here); sq and sqe may be NULL (then they are req->sq
 *       and req->cmd). false: the command is known not to be sampled, nothing more to do for it;
 *   target_command_bound(req): what it notes of a sampled command once nvmet core names it by
 *       request (NVMe/TCP: the command slot's reply PDU buffers).
 */
#ifndef NTPROF_NVMET_TARGET_H
#define NTPROF_NVMET_TARGET_H

struct nvmet_req___ntprof;
struct nvmet_sq___ntprof;
static __always_inline bool target_command_arrives(struct nvmet_req___ntprof *req,
						   struct nvmet_sq___ntprof *sq, const void *sqe);
static __always_inline void target_command_bound(struct nvmet_req___ntprof *req);

/* Sampled commands from capsule to response, keyed by (sq, cid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_INFLIGHT);
	__type(key, struct ntprof_target_key);
	__type(value, struct ntprof_target_inflight);
} inflight SEC(".maps");

/* struct nvmet_req * -> key, from nvmet_req_init on: nvmet core names commands by request. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct ntprof_target_key);
} req_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_SUBSYS);
	__type(key, __u64); /* struct nvmet_subsys * */
	__type(value, __u32);
} subsys_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_SUBSYS);
	__type(key, __u32);
	__type(value, struct ntprof_subsys_name);
} subsys_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ntprof_subsys_name);
} nqn_scratch SEC(".maps");

__u32 next_subsys_id = 0;


static __always_inline struct ntprof_target_inflight *target_lookup(__u64 sq, __u16 cid)
{
	struct ntprof_target_key k = { .sq = sq, .cid = cid };

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	return bpf_map_lookup_elem(&inflight, &k);
}

static __always_inline struct ntprof_target_inflight *target_lookup_req(void *req)
{
	__u64 r = (__u64)req;
	struct ntprof_target_key *k;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	k = bpf_map_lookup_elem(&req_index, &r);
	return k ? bpf_map_lookup_elem(&inflight, k) : NULL;
}

static __always_inline void target_forget(struct ntprof_target_inflight *v, __u64 sq, __u16 cid)
{
	struct ntprof_target_key k = { .sq = sq, .cid = cid };
	__u64 req = v->req;

	if (req)
		bpf_map_delete_elem(&req_index, &req);
	ntprof_in_flight_delete(&inflight, &k);
}


/* The sampling decision on the SQE at sqe_addr: true, with its fields in *sqe, for a sampled
 * command that is not a fabrics command. */
static __always_inline bool target_sampled_sqe(const void *sqe_addr, struct ntprof_sqe *sqe)
{
	return !ntprof_read_sqe(sqe_addr, sqe) && sqe->opcode != NTPROF_OPC_FABRICS &&
	       ntprof_is_sampled(sqe->opcode, sqe->nsid, sqe->slba, sqe->nlb, sqe->cid);
}

/* A sampled command whose capsule arrived at t0 on submission queue sq (struct nvmet_sq *): its
 * in-flight entry. flags: NTPROF_F_INCAPSULE or 0. */
static __always_inline void target_track_command(__u64 sq, const struct ntprof_sqe *sqe, __u32 flags,
						 __u8 transport, __u64 t0)
{
	__u16 qid = BPF_CORE_READ((struct nvmet_sq___ntprof *)sq, qid);

	if (!qid)
		return; /* admin queue: not profiled (the host side skips it too) */

	struct ntprof_target_inflight v = {
		.rec = {
			.slba = sqe->slba,
			.nsid = sqe->nsid,
			.nlb = sqe->nlb,
			.bytes = sqe->data_len,
			.flags = (ntprof_opcode_is_write(sqe->opcode) ? NTPROF_F_WRITE : 0) | flags,
			.qid = qid,
			.cid = sqe->cid,
			.opcode = sqe->opcode,
			.role = NTPROF_ROLE_TARGET,
			.transport = transport,
			.stack = NTPROF_STACK_KERNEL,
		},
	};
	v.rec.stamps[NTPROF_T0_CAPSULE_RECEIVED] = t0;
	struct ntprof_target_key k = { .sq = sq, .cid = sqe->cid };
	if (ntprof_in_flight_insert(&inflight, &k, &v))
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
}

/* T0, now, of a command whose SQE is at sqe_addr on submission queue sq: the sampling decision; a
 * sampled I/O command gets its in-flight entry. flags: NTPROF_F_INCAPSULE or 0. */
static __always_inline void target_track_capsule(__u64 sq, const void *sqe_addr, __u32 flags,
						 __u8 transport)
{
	struct ntprof_sqe sqe;

	if (target_sampled_sqe(sqe_addr, &sqe))
		target_track_command(sq, &sqe, flags, transport, bpf_ktime_get_ns());
}

/* The command carried by req is finished: hand its record to user space and forget it. */
static __always_inline void target_emit_req(void *req)
{
	__u64 r = (__u64)req;
	struct ntprof_target_key *k;
	struct ntprof_target_key key;
	struct ntprof_target_inflight *v;

	if (ntprof_nothing_sampled_in_flight())
		return;
	k = bpf_map_lookup_elem(&req_index, &r);
	if (!k)
		return;
	key = *k;
	v = bpf_map_lookup_elem(&inflight, &key);
	if (v)
		ntprof_emit(&v->rec);
	bpf_map_delete_elem(&req_index, &r);
	ntprof_in_flight_delete(&inflight, &key);
}

/* ---- T1: nvmet_req_init ---- */

/* The agent-local id of ctrl's subsystem; the first sighting publishes its NQN. */
static __always_inline __u32 target_subsys_id(struct nvmet_ctrl___ntprof *ctrl)
{
	__u64 key = (__u64)BPF_CORE_READ(ctrl, subsys);
	__u32 *known = bpf_map_lookup_elem(&subsys_ids, &key);
	__u32 zero = 0, id;
	struct ntprof_subsys_name *name;

	if (known)
		return *known;
	name = bpf_map_lookup_elem(&nqn_scratch, &zero);
	if (!name)
		return 0;
	id = __sync_fetch_and_add(&next_subsys_id, 1) + 1;
	bpf_probe_read_kernel_str(name->nqn, sizeof(name->nqn), ctrl->subsysnqn);
	bpf_map_update_elem(&subsys_names, &id, name, BPF_ANY);
	bpf_map_update_elem(&subsys_ids, &key, &id, BPF_ANY);
	return id;
}

/* sq: the call's argument, or NULL (the tracepoint has none): then read from req. sqe: the
 * tracepoint's command argument, or NULL (the function has none): then req->cmd. */
static __always_inline int on_nvmet_req_init(struct nvmet_req___ntprof *req,
					     struct nvmet_sq___ntprof *sq, const void *sqe)
{
	__u16 cid;
	struct ntprof_target_inflight *v;

	if (!target_command_arrives(req, sq, sqe) || ntprof_nothing_sampled_in_flight())
		return 0;
	if (!sq)
		sq = BPF_CORE_READ(req, sq);
	if (!sqe)
		sqe = BPF_CORE_READ(req, cmd);
	if (bpf_probe_read_kernel(&cid, sizeof(cid), sqe + NTPROF_SQE_CID))
		return 0;
	v = target_lookup((__u64)sq, cid);
	if (!v)
		return 0;
	/* Already bound to another request: a second nvmet_req_init for this (sq, cid) must not
	 * move T1 or rebind the record. Seen for 9 of 1,515 QD8 reads over soft-RoCE on 6.12: T1
	 * rewritten ~18 ms after T2, just before the drive completed; its cause is not known yet. */
	if (v->req && v->req != (__u64)req)
		return 0;
	struct nvmet_ctrl___ntprof *ctrl = BPF_CORE_READ(sq, ctrl);
	v->rec.stamps[NTPROF_T1_REQ_INIT] = bpf_ktime_get_ns();
	v->rec.ctrl = BPF_CORE_READ(ctrl, cntlid);
	v->rec.subsys = target_subsys_id(ctrl);
	v->req = (__u64)req;
	struct ntprof_target_key k = { .sq = (__u64)sq, .cid = cid };
	__u64 r = (__u64)req;
	if (bpf_map_update_elem(&req_index, &r, &k, BPF_ANY))
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
	target_command_bound(req);
	return 0;
}

NTPROF_TRACEPOINT_HOOK(nvmet_req_init, (struct nvmet_req___ntprof *req, void *cmd), req,
		       on_nvmet_req_init(req, NULL, cmd))

SEC("fentry/nvmet_req_init")
int BPF_PROG(nvmet_req_init_fentry, struct nvmet_req___ntprof *req, void *cq,
	     struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq, NULL);
}

SEC("kprobe/nvmet_req_init")
int BPF_KPROBE(nvmet_req_init_kprobe, struct nvmet_req___ntprof *req, void *cq,
	       struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq, NULL);
}

/* ---- T2: handed to the backend ---- */
static __always_inline int on_backend_submit(struct nvmet_req___ntprof *req)
{
	struct ntprof_target_inflight *v = target_lookup_req(req);
	struct block_device *bdev;

	if (!v || v->rec.stamps[NTPROF_T2_BACKEND_SUBMIT])
		return 0;
	v->rec.stamps[NTPROF_T2_BACKEND_SUBMIT] = bpf_ktime_get_ns();
	bdev = BPF_CORE_READ(req, ns, bdev);
	if (bdev)
		v->rec.dev = BPF_CORE_READ(bdev, bd_dev);
	return 0;
}

NTPROF_ENTRY_HOOK(nvmet_bdev_execute_rw, (struct nvmet_req___ntprof *req), on_backend_submit(req))

NTPROF_ENTRY_HOOK(nvmet_file_execute_rw, (struct nvmet_req___ntprof *req), on_backend_submit(req))

/* ---- drive issue / done: the request whose bio nvmet_bdev_execute_rw aimed (bi_private = req) ---- */
static __always_inline struct ntprof_target_inflight *target_lookup_rq(struct request *rq)
{
	struct bio *bio;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	bio = BPF_CORE_READ(rq, bio);
	return bio ? target_lookup_req(BPF_CORE_READ(bio, bi_private)) : NULL;
}

static __always_inline int on_block_rq_issue(struct request *rq)
{
	struct ntprof_target_inflight *v = target_lookup_rq(rq);

	if (v && !v->rec.stamps[NTPROF_T_DRIVE_ISSUE]) {
		v->rec.stamps[NTPROF_T_DRIVE_ISSUE] = bpf_ktime_get_ns();
		v->rec.dev = ntprof_rq_dev(rq);
	}
	return 0;
}

static __always_inline int on_block_rq_complete(struct request *rq)
{
	struct ntprof_target_inflight *v = target_lookup_rq(rq);

	if (v)
		v->rec.stamps[NTPROF_T_DRIVE_DONE] = bpf_ktime_get_ns();
	return 0;
}

NTPROF_TRACEPOINT_HOOK(block_rq_issue, (struct request *rq), rq, on_block_rq_issue(rq))

NTPROF_TRACEPOINT_HOOK(block_rq_complete, (struct request *rq), rq, on_block_rq_complete(rq))

/* ---- T3: nvmet_req_complete ---- */
static __always_inline int on_nvmet_req_complete(struct nvmet_req___ntprof *req, __u16 status)
{
	struct ntprof_target_inflight *v = target_lookup_req(req);

	if (!v)
		return 0;
	v->rec.stamps[NTPROF_T3_BACKEND_DONE] = bpf_ktime_get_ns();
	v->rec.status = status;
	if (status)
		v->rec.flags |= NTPROF_F_ERROR;
	return 0;
}

/* At the tracepoint the status is already in the CQE (status field = bits 15:1). */
static __always_inline __u16 cqe_status(struct nvmet_req___ntprof *req)
{
	__u16 raw = 0;

	bpf_probe_read_kernel(&raw, sizeof(raw), (void *)BPF_CORE_READ(req, cqe) + NTPROF_CQE_STATUS);
	return raw >> 1;
}

NTPROF_TRACEPOINT_HOOK(nvmet_req_complete, (struct nvmet_req___ntprof *req), req,
		       on_nvmet_req_complete(req, cqe_status(req)))

NTPROF_ENTRY_HOOK(nvmet_req_complete, (struct nvmet_req___ntprof *req, __u16 status),
		on_nvmet_req_complete(req, status))

/* ---- T4: response queued ---- */
static __always_inline int target_queue_response(struct nvmet_req___ntprof *req)
{
	struct ntprof_target_inflight *v = target_lookup_req(req);

	/* before T3 this call queued an R2T, not the response */
	if (v && v->rec.stamps[NTPROF_T3_BACKEND_DONE])
		v->rec.stamps[NTPROF_T4_RESPOND] = bpf_ktime_get_ns();
	return 0;
}

#endif /* NTPROF_NVMET_TARGET_H */
