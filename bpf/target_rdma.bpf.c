// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target_rdma.bpf.c - NVMe/RDMA target (nvmet_rdma + nvmet core + the backing block device).
 * T1-T4 and the drive stamps come from ntprof_nvmet_target.h (shared with target_tcp.bpf.c).
 *
 *   T0  = T1: the capsule's receive completion (nvmet_rdma_recv_done) calls nvmet_req_init in the
 *       same call chain with no queue between (docs/hooks.md, "T0 on kernel targets")
 *   T1  tracepoint nvmet:nvmet_req_init (inside nvmet_rdma_handle_command): the sampling decision,
 *       on the SQE (req->cmd = the receive buffer's cmd->nvme_cmd)
 *   T2  nvmet_bdev_execute_rw / nvmet_file_execute_rw entry (handed to the backend)
 *   T3  tracepoint nvmet:nvmet_req_complete
 *   T4  = T3: nvmet core calls nvmet_rdma_queue_response right after that tracepoint, which posts
 *       the response (and, for reads, the RDMA WRITEs of the data chained before it) with one
 *       ib_post_send
 *   T5  reads with data: nvmet_rdma_send_done entry, the completion of the response SEND, which
 *       follows the data WRITEs on the queue pair. Then XFER_POSTED = T4 and XFER_DONE = T5: the
 *       target's span minus the transfer ends when the reply is posted, so the network stage
 *       (H3-H2) - (T5-T0) + (XFER_DONE - XFER_POSTED) is never negative by causality.
 *       Everything else: T5 = T4, the response SEND posted (its completion needs the host's ACK,
 *       which the host may see after its own H3: stamping that would break causality).
 *   XFER (writes whose data is not in the capsule): XFER_POSTED = rdma_rw_ctx_post entry (ib_core:
 *       nvmet_rdma_execute_command posts the RDMA READ of the host's data with it, naming the
 *       command's read_cqe; a command that waited for send-queue room posts when it is executed),
 *       XFER_DONE = T_DATA_RECEIVED = nvmet_rdma_read_data_done entry (which then calls the
 *       backend: T2). Hooking the post rather than nvmet_rdma_execute_command leaves reads and
 *       in-capsule writes without a run there.
 *   T_RESPONSE_SENT  nvmet_rdma_send_done entry for every command: the record is emitted there.
 *
 * Identity: ctrl = cntlid, subsys = agent-local id of the subsystem (subsys_names map: id -> NQN).
 * Variants as in host_tcp.bpf.c.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_nvmet_target.h"
#include "ntprof_rdma_wc.h"

/* nvmet_req_init: the sampling decision on the SQE (sqe, else req->cmd). A second nvmet_req_init
 * for a command already in the table (seen for 9 of 1,515 QD8 reads over soft-RoCE on 6.12, ~18 ms
 * after its T2) is not a new command: the record keeps its stamps. */
static __always_inline bool target_command_arrives(struct nvmet_req___ntprof *req,
						   struct nvmet_sq___ntprof *sq, const void *sqe,
						   struct ntprof_record *rec, bool typed)
{
	struct ntprof_record *known;
	struct ntprof_sqe s;

	if (!ntprof_sampled_sqe(sqe ? sqe : NTPROF_READ(typed, req, cmd), &s, typed))
		return false;
	known = target_lookup_req(req);
	if (known && known->cid == s.cid)
		return false;
	if (!sq)
		sq = NTPROF_READ(typed, req, sq);
	return target_new_record(sq, &s, NTPROF_TRANSPORT_RDMA, rec, typed);
}

/* Replies are found by their work completions: nothing to note at T1. */
static __always_inline void target_command_bound(struct nvmet_req___ntprof *req)
{
}

/* The nvmet_req of the nvmet_rdma_rsp at rsp. */
#define RSP_REQ(rsp) ((void *)(rsp) + bpf_core_field_offset(struct nvmet_rdma_rsp___ntprof, req))

/* ---- XFER_POSTED of writes: the RDMA READ of the host's data is posted ---- */
/* Every rdma_rw_ctx_post on the machine (other RDMA users too); nvmet_rdma's names the command's
 * rsp->read_cqe, so an unsampled command's, or another user's, finds no entry. */
static __always_inline int on_rdma_rw_ctx_post(void *cqe)
{
	struct ntprof_record *v;

	if (ntprof_nothing_sampled_in_flight())
		return 0;
	v = target_lookup_req(RSP_REQ(ntprof_as_number(cqe) -
				      bpf_core_field_offset(struct nvmet_rdma_rsp___ntprof, read_cqe)));
	if (v)
		v->stamps[NTPROF_T_XFER_POSTED] = bpf_ktime_get_ns();
	return 0;
}

NTPROF_STAMPING_ENTRY_HOOK(rdma_rw_ctx_post,
		  (void *rw_ctx, void *qp, __u32 port_num, void *cqe, void *chain_wr),
		  on_rdma_rw_ctx_post(cqe))

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

/* ---- T4: the response is posted (T5 / XFER_POSTED) ---- */
static __always_inline void target_response_queued(struct ntprof_record *v)
{
	__u64 t4 = v->stamps[NTPROF_T4_RESPOND];

	if (!(v->flags & NTPROF_F_WRITE) && v->bytes && !v->status)
		v->stamps[NTPROF_T_XFER_POSTED] = t4; /* data WRITEs chained before the SEND */
	else
		v->stamps[NTPROF_T5_REPLY_SENT] = t4;
}

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
