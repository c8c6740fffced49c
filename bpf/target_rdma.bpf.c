// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target_rdma.bpf.c - NVMe/RDMA target (nvmet_rdma + nvmet core + the backing block device).
 * T1-T4 and the drive stamps come from ntprof_nvmet_target.h (shared with target_tcp.bpf.c).
 *
 *   T0  nvmet_rdma_recv_done ENTRY: the receive completion of the command capsule; the sampling
 *       decision is taken here, on the SQE in the receive buffer (cmd->nvme_cmd). In-capsule data
 *       when the capsule is longer than the 64-byte SQE.
 *   T1  tracepoint nvmet:nvmet_req_init (inside nvmet_rdma_handle_command)
 *   T2  nvmet_bdev_execute_rw / nvmet_file_execute_rw entry (handed to the backend)
 *   T3  tracepoint nvmet:nvmet_req_complete
 *   T4  nvmet_rdma_queue_response entry: the response (and, for reads, the RDMA WRITEs of the data
 *       chained before it) is about to be posted with one ib_post_send
 *   T5  reads with data: nvmet_rdma_send_done entry, the completion of the response SEND, which
 *       follows the data WRITEs on the queue pair. Then XFER_POSTED = T4 and XFER_DONE = T5: the
 *       target's span minus the transfer ends when the reply is posted, so the network stage
 *       (H3-H2) - (T5-T0) + (XFER_DONE - XFER_POSTED) is never negative by causality.
 *       Everything else: T5 = T4, the response SEND posted (its completion needs the host's ACK,
 *       which the host may see after its own H3: stamping that would break causality).
 *   XFER (writes whose data is not in the capsule): XFER_POSTED = nvmet_rdma_execute_command entry
 *       (the RDMA READ of the host's data is posted there with rdma_rw_ctx_post; a command that
 *       waited for send-queue room is stamped again when it is executed), XFER_DONE =
 *       T_DATA_RECEIVED = nvmet_rdma_read_data_done entry (which then calls the backend: T2).
 *   T_RESPONSE_SENT  nvmet_rdma_send_done entry for every command: the record is emitted there.
 *
 * Identity: ctrl = cntlid, subsys = agent-local id of the subsystem (subsys_names map: id -> NQN).
 * Variants as in host_tcp.bpf.c.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_nvmet_target.h"
#include "ntprof_rdma_wc.h"

/* Sampled commands from their capsule's receive completion (T0, where the sampling decision is
 * taken) to nvmet_req_init, keyed by (sq, cid): nvmet_rdma takes the command's request only after
 * that completion, and nvmet_req_init moves the record to the in-flight table by request. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_INFLIGHT);
	__type(key, struct ntprof_target_key);
	__type(value, struct ntprof_record);
} arrivals SEC(".maps");

/* nvmet_req_init: a command sampled at its capsule's arrival hands its record over; a second
 * nvmet_req_init for the same (sq, cid) finds none (seen for 9 of 1,515 QD8 reads over soft-RoCE
 * on 6.12, ~18 ms after T2: it must not move T1 or rebind the record). */
static __always_inline bool target_command_arrives(struct nvmet_req___ntprof *req,
						   struct nvmet_sq___ntprof *sq, const void *sqe,
						   struct ntprof_record *rec, bool typed)
{
	struct ntprof_target_key k = {};
	struct ntprof_record *arrived;

	if (ntprof_nothing_sampled_in_flight())
		return false;
	if (!sq)
		sq = NTPROF_READ(typed, req, sq);
	if (!sqe)
		sqe = NTPROF_READ(typed, req, cmd);
	if (ntprof_get_u16(typed, sqe ? sqe + NTPROF_SQE_CID : NULL, &k.cid))
		return false;
	k.sq = (__u64)sq;
	arrived = bpf_map_lookup_elem(&arrivals, &k);
	if (!arrived)
		return false;
	*rec = *arrived;
	ntprof_in_flight_delete(&arrivals, &k); /* the in-flight table's entry is counted anew */
	return true;
}

/* Replies are found by their work completions: nothing to note at T1. */
static __always_inline void target_command_bound(struct nvmet_req___ntprof *req)
{
}

#define NVME_SQE_LEN 64

/* The nvmet_req of the nvmet_rdma_rsp at rsp. */
#define RSP_REQ(rsp) ((void *)(rsp) + bpf_core_field_offset(struct nvmet_rdma_rsp___ntprof, req))

/* ---- T0: the capsule is received, the sampling decision ---- */
static __always_inline int on_nvmet_rdma_recv_done(struct ib_wc___ntprof *wc, bool typed)
{
	struct nvmet_rdma_cmd___ntprof *cmd;
	struct nvmet_rdma_queue___ntprof *q;
	struct ntprof_target_key k = {};
	struct ntprof_record rec;
	struct ntprof_sqe sqe;

	if (NTPROF_READ(typed, wc, status) != NTPROF_IB_WC_SUCCESS)
		return 0;
	cmd = NTPROF_WC_OWNER(typed, wc, struct nvmet_rdma_cmd___ntprof, cqe);
	q = NTPROF_READ(typed, wc, qp, qp_context);
	/* cmd and q are numbers (container_of, a void *): their reads are probe reads */
	if (!q || !target_sampled_sqe(BPF_CORE_READ(cmd, nvme_cmd), &sqe, false))
		return 0;
	k.sq = (__u64)&q->nvme_sq;
	k.cid = sqe.cid;
	if (target_new_record(&q->nvme_sq, &sqe,
			      NTPROF_READ(typed, wc, byte_len) > NVME_SQE_LEN ? NTPROF_F_INCAPSULE : 0,
			      NTPROF_TRANSPORT_RDMA, bpf_ktime_get_ns(), &rec, false) &&
	    ntprof_in_flight_insert(&arrivals, &k, &rec))
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
	return 0;
}

NTPROF_WC_HOOK(nvmet_rdma_recv_done, on_nvmet_rdma_recv_done)

/* ---- XFER_POSTED of writes: the RDMA READ of the host's data is posted ---- */
static __always_inline int on_nvmet_rdma_execute_command(__u64 rsp)
{
	struct ntprof_record *v = target_lookup_req(RSP_REQ(rsp));

	if (v && (v->flags & NTPROF_F_WRITE) && !(v->flags & NTPROF_F_INCAPSULE) &&
	    v->bytes && !v->stamps[NTPROF_T_XFER_DONE])
		v->stamps[NTPROF_T_XFER_POSTED] = bpf_ktime_get_ns();
	return 0;
}

NTPROF_ENTRY_HOOK(nvmet_rdma_execute_command, (void *rsp),
		  on_nvmet_rdma_execute_command(ntprof_as_number(rsp)))

/* ---- XFER_DONE of writes: the RDMA READ completed ---- */
static __always_inline int on_nvmet_rdma_read_data_done(struct ib_wc___ntprof *wc, bool typed)
{
	struct ntprof_record *v;
	__u64 now;

	if (ntprof_nothing_sampled_in_flight())
		return 0;
	v = target_lookup_req(RSP_REQ(NTPROF_WC_OWNER(typed, wc, struct nvmet_rdma_rsp___ntprof, read_cqe)));
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	v->stamps[NTPROF_T_XFER_DONE] = now;
	v->stamps[NTPROF_T_DATA_RECEIVED] = now;
	return 0;
}

NTPROF_WC_HOOK(nvmet_rdma_read_data_done, on_nvmet_rdma_read_data_done)

/* ---- T4 (and T5 / XFER_POSTED): the response is posted ---- */
static __always_inline int on_nvmet_rdma_queue_response(struct nvmet_req___ntprof *req)
{
	struct ntprof_record *v;
	__u64 t4;

	target_queue_response(req);
	v = target_lookup_req(req);
	if (!v || !(t4 = v->stamps[NTPROF_T4_RESPOND]))
		return 0;
	if (!(v->flags & NTPROF_F_WRITE) && v->bytes && !v->status)
		v->stamps[NTPROF_T_XFER_POSTED] = t4; /* data WRITEs chained before the SEND */
	else
		v->stamps[NTPROF_T5_REPLY_SENT] = t4;
	return 0;
}

NTPROF_ENTRY_HOOK(nvmet_rdma_queue_response, (struct nvmet_req___ntprof *req),
		on_nvmet_rdma_queue_response(req))

/* ---- the response SEND completed: T5 of reads, emit ---- */
static __always_inline int on_nvmet_rdma_send_done(struct ib_wc___ntprof *wc, bool typed)
{
	void *req;
	struct ntprof_record *v;
	__u64 now;

	if (ntprof_nothing_sampled_in_flight())
		return 0;
	req = RSP_REQ(NTPROF_WC_OWNER(typed, wc, struct nvmet_rdma_rsp___ntprof, send_cqe));
	v = target_lookup_req(req);
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	v->stamps[NTPROF_T_RESPONSE_SENT] = now;
	if (v->stamps[NTPROF_T_XFER_POSTED] && !(v->flags & NTPROF_F_WRITE)) {
		v->stamps[NTPROF_T_XFER_DONE] = now;
		v->stamps[NTPROF_T5_REPLY_SENT] = now;
	}
	target_emit_req(req);
	return 0;
}

NTPROF_WC_HOOK(nvmet_rdma_send_done, on_nvmet_rdma_send_done)
