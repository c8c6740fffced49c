/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_nvmet_target.h - the nvmet core side of every kernel target transport (target_tcp.bpf.c,
 * target_rdma.bpf.c): the in-flight table keyed by struct nvmet_req * from nvmet_req_init on, the
 * subsystem ids, and the hooks in nvmet core and the backing block device:
 *
 *   T0  = T1: both transports' receive paths call nvmet_req_init in the call that completed the
 *       capsule, with no queue between (nvmet_tcp_try_recv_pdu after the header's read,
 *       nvmet_rdma_recv_done -> nvmet_rdma_handle_command), so the capsule is taken at T1. Noting
 *       each receive's time for it cost every command a program or two kernel calls; what lay
 *       between was nvmet's header handling, under a microsecond (docs/hooks.md)
 *   T1  nvmet_req_init (tracepoint / function)
 *   T2  handed to the backend: on a blk-mq disk with iostats on, the allocation of the request
 *       for the command's first bio (rq->start_time_ns, read at block_rq_issue); on any other
 *       disk the first bio queued (tracepoint block:block_bio_queue, bi_private = req, attached
 *       by the agent only while such a namespace is enabled: daemon/nvmet_backends.h);
 *       nvmet_file_execute_rw entry for a file namespace; for an NVMe/TCP write whose data came
 *       after an R2T also T_DATA_RECEIVED:
 *       the read of its last byte calls the backend submit (nvmet_tcp_try_recv_data), so watching
 *       every socket read for it cost the target its most frequent program (four runs per
 *       command) for no moment of its own
 *   T3  nvmet_req_complete (tracepoint / function)
 *   T4  = T3: nvmet core queues the response (req->ops->queue_response) right after the
 *       nvmet_req_complete tracepoint, in the same call, so the two are one moment and T4 needs no
 *       hook of its own (the hook measured 2 us under emulation: its own run time, nothing else)
 *   drive issue/done: block_rq_issue/complete of the request whose bio carries the nvmet_req
 *
 * Include after ntprof_bpf_common.h. The transport's object defines
 *   target_command_arrives(req, sq, sqe, rec, typed): at nvmet_req_init, before anything else.
 *       true for a sampled I/O command, with its record so far in *rec (target_new_record(): its
 *       identity and flags): both transports take the sampling decision here. false: nothing more
 *       to do for the command. sq and sqe may be NULL (then they are req->sq and req->cmd); typed:
 *       see NTPROF_READ;
 *   target_command_bound(req): what it notes of a sampled command once it is in the table
 *       (NVMe/TCP: the command slot's reply PDU buffers);
 *   target_response_queued(v): what the response being queued at T4 stamps besides T4 (NVMe/RDMA
 *       posts it there);
 * and emits the record with its last stamp (target_emit_req()).
 */
#ifndef NTPROF_NVMET_TARGET_H
#define NTPROF_NVMET_TARGET_H

#include "ntprof_slots.h"

struct nvmet_req___ntprof;
struct nvmet_sq___ntprof;
static __always_inline bool target_command_arrives(struct nvmet_req___ntprof *req,
						   struct nvmet_sq___ntprof *sq, const void *sqe,
						   struct ntprof_record *rec, bool typed);
static __always_inline void target_command_bound(struct nvmet_req___ntprof *req);
static __always_inline void target_response_queued(struct ntprof_record *v);

/* Sampled commands from nvmet_req_init to their last stamp, keyed by struct nvmet_req *: nvmet
 * core, the block layer (bio->bi_private) and both transports' reply paths name a command by its
 * request, so every later hook finds it in one slot table (ntprof_slots.h). */
NTPROF_SLOT_TABLE(inflight, struct ntprof_record_slot);

/* struct nvmet_subsys * -> its agent-local id, an index (ntprof_slots.h): a sampled command looks
 * its subsystem up without a kernel call. An entry pushed out is published again under a new id. */
NTPROF_INDEX_TABLE(subsys_ids);

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


static __always_inline struct ntprof_record *target_lookup_req(void *req)
{
	return ntprof_inflight_find(&inflight, (__u64)req);
}

/* The record of a sampled command on submission queue sq, in *rec (stamped by on_nvmet_req_init).
 * false for the admin queue, which is not profiled (the host side skips it too). */
static __always_inline bool target_new_record(struct nvmet_sq___ntprof *sq,
					      const struct ntprof_sqe *sqe, __u8 transport,
					      struct ntprof_record *rec, bool typed)
{
	__u16 qid = NTPROF_READ(typed, sq, qid);

	if (!qid)
		return false;
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->slba = sqe->slba;
	rec->nsid = sqe->nsid;
	rec->nlb = sqe->nlb;
	rec->bytes = sqe->data_len;
	rec->flags = ntprof_opcode_is_write(sqe->opcode) ? NTPROF_F_WRITE : 0;
	/* the descriptor both transports' targets map the data by (nvmet_tcp_map_data,
	 * nvmet_rdma_map_sgl): an offset into the capsule, or a place on the host */
	if (sqe->sgl_type == NTPROF_SGL_INCAPSULE)
		rec->flags |= NTPROF_F_INCAPSULE;
	rec->qid = qid;
	rec->cid = sqe->cid;
	rec->opcode = sqe->opcode;
	rec->role = NTPROF_ROLE_TARGET;
	rec->transport = transport;
	rec->stack = NTPROF_STACK_KERNEL;
	return true;
}

/* The command carried by req is done with: forget it. */
static __always_inline void target_forget(void *req)
{
	ntprof_inflight_forget(&inflight, (__u64)req);
}

/* The command carried by req is finished: hand its record to user space and forget it. */
static __always_inline void target_emit_req(void *req)
{
	struct ntprof_record *v = target_lookup_req(req);

	if (!v)
		return;
	ntprof_emit(v);
	target_forget(req);
}

/* ---- T1: nvmet_req_init ---- */

/* The agent-local id of ctrl's subsystem; the first sighting publishes its NQN. */
static __always_inline __u32 target_subsys_id(struct nvmet_ctrl___ntprof *ctrl, bool typed)
{
	__u64 key = (__u64)NTPROF_READ(typed, ctrl, subsys);
	__u32 known = ntprof_index_get(&subsys_ids, key);
	__u32 zero = 0, id;
	struct ntprof_subsys_name *name;

	if (known)
		return known;
	name = bpf_map_lookup_elem(&nqn_scratch, &zero);
	if (!name)
		return 0;
	id = __sync_fetch_and_add(&next_subsys_id, 1) + 1;
	bpf_probe_read_kernel_str(name->nqn, sizeof(name->nqn), ctrl->subsysnqn);
	bpf_map_update_elem(&subsys_names, &id, name, BPF_ANY);
	ntprof_index_put(&subsys_ids, key, id);
	return id;
}

/* sq: the call's argument, or NULL (the tracepoint has none): then read from req. sqe: the
 * tracepoint's command argument, or NULL (the function has none): then req->cmd. */
static __always_inline int on_nvmet_req_init(struct nvmet_req___ntprof *req,
					     struct nvmet_sq___ntprof *sq, const void *sqe, bool typed)
{
	struct ntprof_record rec;

	if (!target_command_arrives(req, sq, sqe, &rec, typed))
		return 0;
	if (!sq)
		sq = NTPROF_READ(typed, req, sq);
	struct nvmet_ctrl___ntprof *ctrl = NTPROF_READ(typed, sq, ctrl);
	rec.stamps[NTPROF_T1_REQ_INIT] = bpf_ktime_get_ns();
	rec.stamps[NTPROF_T0_CAPSULE_RECEIVED] = rec.stamps[NTPROF_T1_REQ_INIT]; /* see the top */
	rec.ctrl = NTPROF_READ(typed, ctrl, cntlid);
	rec.subsys = target_subsys_id(ctrl, typed);
	if (ntprof_inflight_put(&inflight, (__u64)req, &rec))
		return 0; /* no slot free (counted) */
	target_command_bound(req);
	return 0;
}

NTPROF_DECIDING_TRACEPOINT_HOOK(nvmet_req_init, (struct nvmet_req___ntprof *req, void *cmd), req, cmd,
				on_nvmet_req_init(req, NULL, cmd, ntprof_typed))

SEC("fentry/nvmet_req_init")
int BPF_PROG(nvmet_req_init_fentry, struct nvmet_req___ntprof *req, void *cq,
	     struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq, NULL, true);
}

SEC("kprobe/nvmet_req_init")
int BPF_KPROBE(nvmet_req_init_kprobe, struct nvmet_req___ntprof *req, void *cq,
	       struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq, NULL, false);
}

/* ---- T2: handed to the backend ---- */
static __always_inline void backend_submitted_at(struct ntprof_record *v, __u64 when)
{
	v->stamps[NTPROF_T2_BACKEND_SUBMIT] = when;
	/* An NVMe/TCP write's data came after an R2T: the call that read its last byte submits it
	 * here, with no queue between (nvmet_tcp_try_recv_data -> nvmet_tcp_execute_request), so all
	 * of it is in at T2 (NVMe/RDMA stamps its READ's completion itself) */
	if (v->flags & NTPROF_F_R2T)
		v->stamps[NTPROF_T_DATA_RECEIVED] = when;
}

static __always_inline int on_backend_submit(struct nvmet_req___ntprof *req, bool typed)
{
	struct ntprof_record *v = target_lookup_req(req);
	struct block_device *bdev;

	if (!v || v->stamps[NTPROF_T2_BACKEND_SUBMIT])
		return 0;
	backend_submitted_at(v, bpf_ktime_get_ns());
	bdev = NTPROF_READ(typed, req, ns, bdev);
	if (bdev)
		v->dev = NTPROF_READ(typed, bdev, bd_dev);
	return 0;
}

/* A block device namespace's command on a disk without a stamped request (bio-based, iostats
 * off): the bio nvmet_bdev_execute_rw built first carries the request (bi_private) and is the
 * first one submitted (later ones are chained to it), so T2 is the tracepoint in submit_bio's path
 * that fires once per bio. A tracepoint run costs the target about 90 guest instructions per I/O
 * less than the trampoline at the function's entry, and nothing happens in between but the bio's
 * set-up (docs/overhead.md, "The third cut"). The request is read untyped: bi_private is a void *
 * the verifier does not type. */
NTPROF_STAMPING_TRACEPOINT_HOOK(block_bio_queue, (struct bio *bio), bio,
		       on_backend_submit(BPF_CORE_READ(bio, bi_private), false))

NTPROF_STAMPING_ENTRY_HOOK(nvmet_file_execute_rw, (struct nvmet_req___ntprof *req),
		  on_backend_submit(req, ntprof_typed))

/* ---- drive issue: the request whose bio nvmet_bdev_execute_rw built (bi_private = req); the
 * drive's completion is stamped at T3 ---- */
static __always_inline struct ntprof_record *target_lookup_rq(struct request *rq, bool typed)
{
	struct bio *bio;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	bio = NTPROF_READ(typed, rq, bio);
	return bio ? target_lookup_req(NTPROF_READ(typed, bio, bi_private)) : NULL;
}

/* T2 from the request, when block_bio_queue did not stamp it: a blk-mq disk with iostats on stamps
 * the request it allocates for the command's first bio (rq->start_time_ns: ktime_get_ns(), the
 * clock of bpf_ktime_get_ns; 6.9+ may take it from the submitting task's plug, set within this
 * submission). That is microseconds after the bio is queued, with only the bio's own block-layer
 * set-up in between (docs/overhead.md, "The seventh cut"). A stamp outside [T1, now] is another
 * command's request (our bio merged into it) or a disk that stamps nothing: T2 stays missing, the
 * agent counts it and looks at its namespaces again (daemon/nvmet_backends.h). */
static __always_inline void backend_submit_from_request(struct ntprof_record *v, struct request *rq,
							bool typed, __u64 now)
{
	__u64 allocated;

	if (v->stamps[NTPROF_T2_BACKEND_SUBMIT])
		return;
	allocated = NTPROF_READ(typed, rq, start_time_ns);
	if (allocated >= v->stamps[NTPROF_T1_REQ_INIT] && allocated <= now)
		backend_submitted_at(v, allocated);
}

static __always_inline int on_block_rq_issue(struct request *rq, bool typed)
{
	struct ntprof_record *v = target_lookup_rq(rq, typed);
	__u64 now;

	if (!v || v->stamps[NTPROF_T_DRIVE_ISSUE])
		return 0;
	now = bpf_ktime_get_ns();
	v->stamps[NTPROF_T_DRIVE_ISSUE] = now;
	v->dev = ntprof_rq_dev(rq, typed);
	backend_submit_from_request(v, rq, typed, now);
	return 0;
}

NTPROF_STAMPING_TRACEPOINT_HOOK(block_rq_issue, (struct request *rq), rq,
		       on_block_rq_issue(rq, ntprof_typed))

/* ---- T3: nvmet_req_complete ---- */
static __always_inline __u16 cqe_status(struct nvmet_req___ntprof *req, bool typed);

/* status: the call's argument, or -1 at the tracepoint (then read from the CQE: only for a sampled
 * command). T3 and T4 (see the top of this file). */
static __always_inline int on_nvmet_req_complete(struct nvmet_req___ntprof *req, int status,
						 bool typed)
{
	struct ntprof_record *v = target_lookup_req(req);
	__u64 now;

	if (!v)
		return 0;
	if (status < 0)
		status = cqe_status(req, typed);
	now = bpf_ktime_get_ns();
	v->stamps[NTPROF_T3_BACKEND_DONE] = now;
	v->stamps[NTPROF_T4_RESPOND] = now;
	/* The drive's completion ends the request in the same call chain that ends here
	 * (blk_update_request -> bio_endio -> nvmet_bio_done -> nvmet_req_complete): no program
	 * at block_rq_complete, one run per I/O less (docs/overhead.md, "The second cut"). */
	if (v->stamps[NTPROF_T_DRIVE_ISSUE])
		v->stamps[NTPROF_T_DRIVE_DONE] = now;
	v->status = status;
	if (status)
		v->flags |= NTPROF_F_ERROR;
	target_response_queued(v);
	return 0;
}

/* At the tracepoint the status is already in the CQE (status field = bits 15:1). */
static __always_inline __u16 cqe_status(struct nvmet_req___ntprof *req, bool typed)
{
	void *cqe = NTPROF_READ(typed, req, cqe);
	__u16 raw = 0;

	ntprof_get_u16(typed, cqe ? cqe + NTPROF_CQE_STATUS : NULL, &raw);
	return raw >> 1;
}

NTPROF_STAMPING_TRACEPOINT_HOOK(nvmet_req_complete, (struct nvmet_req___ntprof *req), req,
		       on_nvmet_req_complete(req, -1, ntprof_typed))

NTPROF_STAMPING_ENTRY_HOOK(nvmet_req_complete, (struct nvmet_req___ntprof *req, __u16 status),
		on_nvmet_req_complete(req, status, ntprof_typed))

#endif /* NTPROF_NVMET_TARGET_H */
