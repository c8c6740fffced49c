// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target_tcp.bpf.c - NVMe/TCP target (nvmet_tcp + nvmet core + the backing block device).
 * T1-T4 and the drive stamps come from ntprof_nvmet_target.h (shared with target_rdma.bpf.c).
 *
 *   T0  kernel_recvmsg return inside nvmet_tcp_try_recv_pdu: the command capsule header complete in
 *       queue->pdu; the sampling decision is taken here, on the SQE inside the capsule
 *   T1  tracepoint nvmet:nvmet_req_init
 *   T2  nvmet_bdev_execute_rw / nvmet_file_execute_rw entry (handed to the backend)
 *   T3  tracepoint nvmet:nvmet_req_complete
 *   T4  nvmet_tcp_queue_response entry after T3 (R2T writes also call it earlier, for the R2T)
 *   T5  the socket send calls of ntprof_tcp_send.h (kernel_sendpage + kernel_sendmsg before Linux
 *       6.5, sock_sendmsg from 6.5 on): the ENTRY of the call that hands the header of the first
 *       reply PDU (C2HData for reads, the response capsule otherwise) to TCP. Entry, not return:
 *       nothing of the reply can reach the host earlier, so the network stage is never negative.
 *   components: drive issue/done (block_rq_issue/complete of the request whose bio carries the
 *   nvmet_req), R2T PDU handed to TCP, last H2CData PDU header received (T_DATA_RECEIVED; its
 *   payload is read right after, before T2), response capsule fully handed to TCP (the record is
 *   emitted there).
 *
 * Identity: ctrl = cntlid, subsys = agent-local id of the subsystem (subsys_names map: id -> NQN).
 * Variants as in host_tcp.bpf.c.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_nvmet_target.h"
#include "ntprof_tcp_send.h"
#include <bpf/bpf_endian.h>

struct target_sock {
	struct ntprof_tcp_send_state send; /* first: tcp_sent() gets a pointer to it */
	__u64 queue;     /* struct nvmet_tcp_queue * (= sk->sk_user_data), checked on every use */
	__u64 pdu;       /* &queue->pdu: where PDU headers are received */
	__u64 sq;        /* &queue->nvme_sq */
	__s32 remaining; /* bytes of the PDU being sent not yet handed to TCP */
	__u16 cur_cid;
	__u8 cur_type;
	__u8 cur_flags;
	__u64 pdu_start_ns; /* entry of the send call that handed the current PDU's first byte */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_SOCKETS);
	__type(key, __u64);
	__type(value, struct target_sock);
} target_socks SEC(".maps");

enum target_kprobe_hook {
	HOOK_KERNEL_RECVMSG = 1,
};

#define PDU_BUF_MAX 128 /* sizeof(union nvme_tcp_pdu) is 72 + digest; anything inside is a header */

/* A socket is ours when its local port is an NVMe/TCP port; its sk_user_data is the queue. */
static __always_inline struct target_sock *target_sock_get(struct sock *sk)
{
	__u64 key = (__u64)sk;
	struct target_sock *s = bpf_map_lookup_elem(&target_socks, &key);
	__u64 queue;

	if (!s) {
		__u16 lport = BPF_CORE_READ(sk, __sk_common.skc_num); /* host byte order */

		if (!bpf_map_lookup_elem(&tcp_ports, &lport))
			return NULL;
	}
	queue = (__u64)BPF_CORE_READ(sk, sk_user_data) & ~7ULL;
	if (s && s->queue == queue)
		return s;
	if (!queue)
		return NULL;
	struct nvmet_tcp_queue___ntprof *q = (void *)queue;
	struct target_sock fresh = {
		.queue = queue,
		.pdu = (__u64)&q->pdu,
		.sq = (__u64)&q->nvme_sq,
	};
	bpf_map_update_elem(&target_socks, &key, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&target_socks, &key);
}

/* ---- T0: capsule header received, the sampling decision ---- */
static __always_inline void target_capsule_received(struct target_sock *s, __u32 plen, __u32 hd)
{
	target_track_capsule(s->sq, (void *)(s->pdu + NTPROF_PDU_HDR_LEN),
			     plen > NTPROF_PDU_CMD_HLEN + hd + NTPROF_PDU_DIGEST_LEN ? NTPROF_F_INCAPSULE : 0,
			     NTPROF_TRANSPORT_TCP);
}

/* kernel_recvmsg returned ret bytes read into vec on sk. nvmet_tcp reads PDU headers into
 * queue->pdu (at queue->offset) and nothing else there: a read ending at hlen + digest completes
 * a header. */
static __always_inline void target_on_recv(struct sock *sk, struct kvec *vec, long ret)
{
	struct target_sock *s;
	__u64 base, end;
	__u8 h[NTPROF_PDU_HDR_LEN];
	__u32 hd;

	if (ret <= 0)
		return;
	s = target_sock_get(sk);
	if (!s)
		return;
	base = (__u64)BPF_CORE_READ(vec, iov_base);
	if (base < s->pdu || base >= s->pdu + PDU_BUF_MAX)
		return;
	end = base - s->pdu + ret;
	if (end <= NTPROF_PDU_HDR_LEN || bpf_probe_read_kernel(h, sizeof(h), (void *)s->pdu))
		return;
	struct nvmet_tcp_queue___ntprof *q = (void *)s->queue; /* a plain variable: CO-RE relocates q's
								  * fields only, not s's */
	hd = BPF_CORE_READ(q, hdr_digest) ? NTPROF_PDU_DIGEST_LEN : 0;
	if (end != h[2] + hd)
		return;
	if (h[0] == NTPROF_PDU_CMD) {
		target_capsule_received(s, *(__u32 *)&h[4], hd);
	} else if (h[0] == NTPROF_PDU_H2C_DATA) {
		__u16 cid;
		struct ntprof_target_inflight *v;

		if (bpf_probe_read_kernel(&cid, sizeof(cid), (void *)(s->pdu + NTPROF_PDU_DATA_CID)))
			return;
		v = target_lookup(s->sq, cid);
		if (v)
			v->rec.stamps[NTPROF_T_DATA_RECEIVED] = bpf_ktime_get_ns();
	}
}

SEC("fexit/kernel_recvmsg")
int BPF_PROG(kernel_recvmsg_fexit, struct socket *sock, struct msghdr *msg, struct kvec *vec,
	     size_t num, size_t size, int flags, int ret)
{
	if (ret > 0) /* most calls find nothing to read: no work for them */
		target_on_recv(BPF_CORE_READ(sock, sk), vec, ret);
	return 0;
}

SEC("kprobe/kernel_recvmsg")
int BPF_KPROBE(kernel_recvmsg_kprobe, struct socket *sock, struct msghdr *msg, struct kvec *vec)
{
	ntprof_save_args(HOOK_KERNEL_RECVMSG, ctx, (__u64)sock, (__u64)vec, 0, 0, 0);
	return 0;
}

SEC("kretprobe/kernel_recvmsg")
int BPF_KRETPROBE(kernel_recvmsg_kretprobe, int ret)
{
	struct ntprof_saved_key k;
	struct ntprof_saved_args *a = ntprof_saved_args(HOOK_KERNEL_RECVMSG, ctx, &k);

	if (!a)
		return 0;
	struct socket *sock = (void *)a->arg[0];

	target_on_recv(BPF_CORE_READ(sock, sk), (void *)a->arg[1], ret);
	bpf_map_delete_elem(&kprobe_args, &k);
	return 0;
}


NTPROF_ENTRY_HOOK(nvmet_tcp_queue_response, (struct nvmet_req___ntprof *req),
		target_queue_response(req))

/* ---- T5: reply PDUs handed to TCP ---- */

static __always_inline struct ntprof_tcp_send_state *tcp_send_state(struct sock *sk)
{
	struct target_sock *s = target_sock_get(sk);

	return s ? &s->send : NULL;
}

/* A send call handed `sent` bytes, starting at st->call_start_addr, to TCP: follow the reply
 * PDUs. */
static __always_inline void tcp_sent(struct sock *sk, struct ntprof_tcp_send_state *st, long sent)
{
	struct target_sock *s = (struct target_sock *)st;
	struct ntprof_target_inflight *v;
	__u64 now;

	if (s->remaining <= 0) {
		__u8 h[NTPROF_PDU_SMALL_HLEN];

		if (bpf_probe_read_kernel(h, sizeof(h), (void *)st->call_start_addr))
			return;
		if (h[0] == NTPROF_PDU_RSP && h[2] == NTPROF_PDU_SMALL_HLEN)
			s->cur_cid = *(__u16 *)&h[NTPROF_PDU_RSP_CID];
		else if ((h[0] == NTPROF_PDU_C2H_DATA || h[0] == NTPROF_PDU_R2T) &&
			 h[2] == NTPROF_PDU_SMALL_HLEN)
			s->cur_cid = *(__u16 *)&h[NTPROF_PDU_DATA_CID];
		else if (h[0] != NTPROF_PDU_ICRESP) {
			ntprof_lose(NTPROF_LOSS_PDU_RESYNC);
			return;
		}
		s->cur_type = h[0];
		s->cur_flags = h[1];
		s->remaining = *(__u32 *)&h[4];
		s->pdu_start_ns = st->call_start_ns;
		if (h[0] == NTPROF_PDU_RSP || h[0] == NTPROF_PDU_C2H_DATA) {
			v = target_lookup(s->sq, s->cur_cid);
			if (v && !v->rec.stamps[NTPROF_T5_REPLY_SENT])
				v->rec.stamps[NTPROF_T5_REPLY_SENT] = s->pdu_start_ns;
		}
	}
	s->remaining -= sent;
	if (s->remaining > 0)
		return;
	s->remaining = 0;
	if (s->cur_type == NTPROF_PDU_ICRESP)
		return;
	v = target_lookup(s->sq, s->cur_cid);
	if (!v)
		return;
	now = bpf_ktime_get_ns();
	if (s->cur_type == NTPROF_PDU_R2T) {
		/* entry of the call, as T5: the R2T wait is then never shorter than the host saw it */
		v->rec.stamps[NTPROF_T_R2T_SENT] = s->pdu_start_ns;
		v->rec.flags |= NTPROF_F_R2T;
		return;
	}
	if (s->cur_type == NTPROF_PDU_RSP ||
	    (s->cur_type == NTPROF_PDU_C2H_DATA && (s->cur_flags & NTPROF_PDU_F_DATA_SUCCESS))) {
		/* the last PDU of the command: the record is complete */
		v->rec.stamps[NTPROF_T_RESPONSE_SENT] = now;
		ntprof_emit(&v->rec);
		target_forget(v, s->sq, s->cur_cid);
	}
}
