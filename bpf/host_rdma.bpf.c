// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * host_rdma.bpf.c - NVMe/RDMA host (nvme_core + nvme_rdma + the block layer).
 * H0, H1, H4, H5 come from ntprof_nvme_host.h (shared with host_tcp.bpf.c).
 *
 *   H0  rq->start_time_ns, read at H1
 *   H1  tracepoint nvme:nvme_setup_cmd         sampling decision (cid is assigned just before)
 *   H2  nvme_rdma_post_send ENTRY for the command's SQE (qe, inside the request's driver data):
 *       the capsule SEND (with in-capsule data: more than one SGE) is about to be posted. Entry,
 *       not return: nothing of the capsule can reach the target earlier, so the network stage is
 *       never negative.
 *   H3  nvme_rdma_recv_done ENTRY: the receive completion of the response capsule (cid from the
 *       CQE in the receive buffer qe->data). Read data was RDMA-written by the target before the
 *       response SEND on the same queue pair, so it is already in place: H3 is the whole reply
 *       (H_RESPONSE_RECEIVED = H3).
 *   H4  = H5: nvme_complete_rq ends the request in the same call chain (one program
 *       run per I/O less; the status is read at H5). nvme_rdma completes a request once both
 *       its SEND and the response have completed.
 *   H5  tracepoint block:block_rq_complete     the record is emitted here
 *
 * Variants as in host_tcp.bpf.c: _fentry = BPF trampoline, _kprobe = kprobe.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_host_block.h"
#define NTPROF_HOST_TRANSPORT NTPROF_TRANSPORT_RDMA
#include "ntprof_nvme_host.h"
#include "ntprof_rdma_wc.h"

/* The capsule is found by its SQE (qe->data) at H2: nothing to note at H1. */
static __always_inline void host_command_sampled(struct request *rq, const void *cmd)
{
}

/* (controller instance, qid) of an nvme_rdma queue. */
static __always_inline __u32 rdma_queue_ident(struct nvme_rdma_queue___ntprof *q, __u16 *qid)
{
	struct nvme_rdma_ctrl___ntprof *c = BPF_CORE_READ(q, ctrl);
	__u64 queues = (__u64)BPF_CORE_READ(c, queues);

	*qid = ((__u64)q - queues) / bpf_core_type_size(struct nvme_rdma_queue___ntprof);
	return BPF_CORE_READ(c, ctrl.instance);
}

/* ---- H2: the command capsule SEND is posted ---- */
/* qe is the sqe member of a request's driver data (the asynchronous event's qe is the
 * controller's: it names no request in flight), so the request is found by arithmetic alone, not
 * by the cid in the SQE buffer and the queue's identity (five probe reads). */
static __always_inline int on_nvme_rdma_post_send(void *qe, __u32 num_sge)
{
	struct ntprof_record *rec;

	if (ntprof_nothing_sampled_in_flight())
		return 0;
	rec = host_lookup_request(nvme_rq_of_pdu(
		ntprof_as_number(qe) - bpf_core_field_offset(struct nvme_rdma_request___ntprof, sqe)));
	if (!rec || rec->stamps[NTPROF_H2_CAPSULE_SENT])
		return 0;
	rec->stamps[NTPROF_H2_CAPSULE_SENT] = bpf_ktime_get_ns();
	if (num_sge > 1)
		rec->flags |= NTPROF_F_INCAPSULE; /* SGE 0 is the SQE, the others in-capsule data */
	return 0;
}

NTPROF_STAMPING_ENTRY_HOOK(nvme_rdma_post_send, (void *queue, void *qe, void *sge, __u32 num_sge),
		  on_nvme_rdma_post_send(qe, num_sge))

/* ---- H3: the response capsule is received ---- */
static __always_inline int on_nvme_rdma_recv_done(struct ib_wc___ntprof *wc, bool typed)
{
	struct nvme_rdma_qe___ntprof *qe;
	struct ntprof_record *rec;
	__u64 cqe_addr;
	__u16 qid, cid;
	__u32 ctrl;

	if (ntprof_nothing_sampled_in_flight() ||
	    NTPROF_READ(typed, wc, status) != NTPROF_IB_WC_SUCCESS)
		return 0;
	qe = NTPROF_WC_OWNER(typed, wc, struct nvme_rdma_qe___ntprof, cqe);
	cqe_addr = (__u64)BPF_CORE_READ(qe, data);
	if (!cqe_addr || bpf_probe_read_kernel(&cid, sizeof(cid), (void *)(cqe_addr + NTPROF_CQE_CID)))
		return 0;
	ctrl = rdma_queue_ident(NTPROF_READ(typed, wc, qp, qp_context), &qid);
	rec = host_lookup_cid(ctrl, qid, cid);
	if (!rec || !rec->stamps[NTPROF_H2_CAPSULE_SENT] || rec->stamps[NTPROF_H3_REPLY_RECEIVED])
		return 0;
	rec->stamps[NTPROF_H3_REPLY_RECEIVED] = bpf_ktime_get_ns();
	rec->stamps[NTPROF_H_RESPONSE_RECEIVED] = rec->stamps[NTPROF_H3_REPLY_RECEIVED];
	return 0;
}

NTPROF_WC_HOOK(nvme_rdma_recv_done, on_nvme_rdma_recv_done)
