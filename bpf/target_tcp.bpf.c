// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target_tcp.bpf.c - NVMe/TCP target (nvmet_tcp + nvmet core + the backing block device).
 * T1-T4 and the drive stamps come from ntprof_nvmet_target.h (shared with target_rdma.bpf.c).
 *
 *   T0  = T1: the read that completes the capsule header returns into nvmet_tcp_try_recv_pdu,
 *       which calls nvmet_tcp_done_recv_pdu -> nvmet_req_init with no queue between
 *   T1  tracepoint nvmet:nvmet_req_init; the sampling decision is taken here, on the SQE that
 *       nvmet_tcp copied out of the capsule (req->cmd)
 *   T2  handed to the backend (ntprof_nvmet_target.h: the first bio queued, or
 *       nvmet_file_execute_rw entry)
 *   T3  tracepoint nvmet:nvmet_req_complete
 *   T4  = T3: nvmet core calls nvmet_tcp_queue_response right after that tracepoint
 *   T5  tracepoint net:net_dev_queue: the skb that carries the first byte of the header of the
 *       first reply PDU (C2HData for reads, the response capsule otherwise) queued to the network
 *       device, recognised among the skb's page fragments by the command slot's reply buffers
 *       (nvmet_tcp_cmd.rsp_pdu, .data_pdu, .r2t_pdu), noted at T1 (ntprof_tcp_xmit.h says why
 *       there and not at the socket send calls)
 *   components: drive issue (block_rq_issue of the request whose bio carries the nvmet_req) and
 *   done (= T3, the same call chain), R2T PDU queued to the device (T_R2T_SENT), all H2CData
 *   received (T_DATA_RECEIVED = T2: the read of the last byte submits the command to the backend),
 *   the command's last PDU (the response capsule, or a C2HData that carries the success flag)
 *   queued to the device (T_RESPONSE_SENT: nothing of the command is stamped after it, so the
 *   record is emitted there).
 * No program watches the socket reads: T0 is T1, and T_DATA_RECEIVED is T2.
 *
 * Identity: ctrl = cntlid, subsys = agent-local id of the subsystem (subsys_names map: id -> NQN).
 * Variants as in host_tcp.bpf.c.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_nvmet_target.h"
#include "ntprof_tcp_xmit.h"

/* ---- T1: the sampling decision ---- */

/* nvmet_req_init of a command that came in a capsule on sq: the sampling decision on its SQE (sqe,
 * else req->cmd: nvmet_tcp copied it there out of the capsule). false for a command that is not
 * sampled: nvmet core then need not look for it. */
static __always_inline bool target_command_arrives(struct nvmet_req___ntprof *req,
						   struct nvmet_sq___ntprof *sq, const void *sqe,
						   struct ntprof_record *rec, bool typed)
{
	struct ntprof_sqe s;

	if (!ntprof_sampled_sqe(sqe ? sqe : NTPROF_READ(typed, req, cmd), &s, typed))
		return false;
	if (!sq)
		sq = NTPROF_READ(typed, req, sq);
	return target_new_record(sq, &s, NTPROF_TRANSPORT_TCP, rec, typed);
}

/* The reply is found by its PDU headers when it is handed to TCP: nothing to stamp at T4. */
static __always_inline void target_response_queued(struct ntprof_record *v)
{
}

/* ---- T5, T_R2T_SENT, T_RESPONSE_SENT: reply PDUs queued to the network device ---- */

/* The reply PDU buffers of a command slot that carried a sampled command (nvmet_tcp_cmd.rsp_pdu,
 * .data_pdu, .r2t_pdu) -> the slot (struct nvmet_tcp_cmd *). The pair is fixed for the queue's
 * life, so it is noted once; the slot's later commands reuse the buffers, so a PDU is taken for a
 * sampled command only when the header there names its cid. An index (ntprof_slots.h). */
NTPROF_INDEX_TABLE(reply_pdus);

static __always_inline void target_command_bound(struct nvmet_req___ntprof *req)
{
	__u64 slot = (__u64)req - bpf_core_field_offset(struct nvmet_tcp_cmd___ntprof, req);
	struct nvmet_tcp_cmd___ntprof *cmd = (void *)slot;
	__u64 rsp_pdu = (__u64)BPF_CORE_READ(cmd, rsp_pdu);

	if (ntprof_index_get(&reply_pdus, rsp_pdu) == slot)
		return; /* noted when the slot last carried a sampled command: one probe read */
	__u64 pdus[3] = {
		rsp_pdu,
		(__u64)BPF_CORE_READ(cmd, data_pdu),
		(__u64)BPF_CORE_READ(cmd, r2t_pdu),
	};
	for (int i = 0; i < 3; i++)
		if (pdus[i])
			ntprof_index_put(&reply_pdus, pdus[i], slot);
}

/* A reply PDU header of the command slot `slot` begins at first_byte of an skb queued to a device
 * at `now`: if the header names the sampled command the slot carries, stamp it; the command's last
 * PDU completes its record. */
static __always_inline void reply_pdu_queued(__u64 slot, __u64 first_byte, __u64 now)
{
	struct ntprof_record *v;
	__u8 h[NTPROF_PDU_SMALL_HLEN];
	__u64 req;
	__u16 cid;

	if (bpf_probe_read_kernel(h, sizeof(h), (void *)first_byte) ||
	    h[2] != NTPROF_PDU_SMALL_HLEN)
		return;
	cid = *(__u16 *)&h[h[0] == NTPROF_PDU_RSP ? NTPROF_PDU_RSP_CID : NTPROF_PDU_DATA_CID];
	/* the slot's request carries its current command; the header must name that command */
	req = slot + bpf_core_field_offset(struct nvmet_tcp_cmd___ntprof, req);
	v = target_lookup_req((void *)req); /* only a sampled command in flight has an entry */
	if (!v || v->cid != cid)
		return;
	if (h[0] == NTPROF_PDU_R2T) {
		if (!v->stamps[NTPROF_T_R2T_SENT])
			v->stamps[NTPROF_T_R2T_SENT] = now;
		v->flags |= NTPROF_F_R2T;
		return;
	}
	if (h[0] != NTPROF_PDU_RSP && h[0] != NTPROF_PDU_C2H_DATA)
		return;
	if (!v->stamps[NTPROF_T5_REPLY_SENT])
		v->stamps[NTPROF_T5_REPLY_SENT] = now;
	if (h[0] == NTPROF_PDU_C2H_DATA && !(h[1] & NTPROF_PDU_F_DATA_SUCCESS))
		return; /* the response capsule follows */
	v->stamps[NTPROF_T_RESPONSE_SENT] = now;
	ntprof_emit(v);
	target_forget((void *)req);
}

/* A page fragment of an skb queued to a device: a reply PDU of a sampled command when it begins at
 * one of the command slot's reply buffers. Of those buffers, only a slot's R2T can continue in
 * memory the response of the slot allocated just below it, and so merge into its fragment: at
 * QD > 1 a write's R2T can go unseen (T_R2T_SENT missing; the record is still whole). */
static __always_inline void pdu_fragment_queued(__u64 skb, __u64 first_byte, __u32 len,
						__u64 *now)
{
	__u64 slot = ntprof_index_get(&reply_pdus, first_byte);

	if (slot)
		reply_pdu_queued(slot, first_byte, ntprof_now_once(now));
}
