// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * host_tcp.bpf.c - NVMe/TCP host (nvme_core + nvme_tcp + the block layer).
 * H0, H1, H4, H5 come from ntprof_nvme_host.h (shared with host_rdma.bpf.c).
 *
 *   H0  rq->start_time_ns, read at H1
 *   H1  tracepoint nvme:nvme_setup_cmd         sampling decision (cid is assigned just before)
 *   H2  tracepoint net:net_dev_queue: the skb that carries the command capsule PDU queued to the
 *       network device, recognised among its page fragments by the command's PDU buffer
 *       (nvme_tcp_request.pdu, noted at H1; ntprof_tcp_xmit.h). Nothing of the capsule reaches
 *       the target before it, so the network stage is never negative.
 *   H3  skb_copy_bits return: the first reply PDU header (C2HData for reads, the response capsule
 *       otherwise) complete in queue->pdu, the queue found by the skb's socket
 *   H4  = H5: nvme_complete_rq ends the request in the same call chain (one program
 *       run per I/O less; the status is read at H5)
 *   H5  tracepoint block:block_rq_complete     the record is emitted here
 * Devices are namespace heads (nvme0n1) even with native multipath, where requests run on hidden
 * path disks that have no dev_t in sysfs.
 *   components: response capsule header (H_RESPONSE_RECEIVED), first R2T header (H_R2T_RECEIVED),
 *   the last H2CData PDU queued to the device (H_DATA_SENT).
 *
 * Why the socket layer for H3: nvme_tcp's own receive helpers are inlined on Debian's kernels
 * (see docs/hooks.md); the PDU headers pass through skb_copy_bits as copies of their own.
 *
 * Variants (one is chosen per hook by the agent's HookPlan): _tp = tp_btf, _rawtp = raw tracepoint,
 * _fentry/_fexit = BPF trampoline, _kprobe/_kretprobe = kprobes (the entry saves the arguments).
 */
#include "ntprof_bpf_common.h"
#include "ntprof_host_block.h"
#define NTPROF_HOST_TRANSPORT NTPROF_TRANSPORT_TCP
#include "ntprof_nvme_host.h"
#include "ntprof_tcp_xmit.h"

/* What we know of one NVMe/TCP socket: its queue. Slots in an array (ntprof_slots.h), keyed by
 * struct sock *. A socket is learned when a sampled command's capsule is sent on it, so a reply
 * to that command finds its queue by the skb's socket without a kernel call. A slot is never
 * freed; a socket address reused by another queue is read afresh. */
struct host_sock {
	__u64 key;       /* struct sock *; 0 = free */
	__u64 queue;     /* struct nvme_tcp_queue * (= sk->sk_user_data), checked on every use;
			  * 0 while the fields below are being set */
	__u64 pdu;       /* queue->pdu: where the queue receives PDU headers (fixed for its life) */
	__u32 ctrl;      /* nvmeN instance */
	__u16 qid;
	__u16 hdr_len;   /* a reply PDU header's length on this queue: 24 + header digest */
};

NTPROF_SLOT_ARRAY(host_socks, struct host_sock);

/* Where a sampled command's PDU headers are built (nvme_tcp_request.pdu: the capsule at its start,
 * H2CData headers at its back) -> its struct request *, an index (ntprof_slots.h).
 * The pair is fixed for the request's life, so entries are never deleted; a send that begins at an
 * address here still stamps only a command in the in-flight table whose cid its header names. */
NTPROF_INDEX_TABLE(pdu_requests);

enum host_kprobe_hook {
	HOOK_SKB_COPY_BITS = 3,
};



/* ---- NVMe/TCP sockets ---- */

/* The state of sk if it is an NVMe/TCP host socket the programs have learned, else NULL. */
static __always_inline struct host_sock *host_sock_find(struct sock *sk, bool typed)
{
	struct host_sock *s = (struct host_sock *)ntprof_slot_find(&host_socks, (__u64)sk);
	__u64 queue;

	if (!s)
		return NULL;
	queue = (__u64)NTPROF_READ(typed, sk, sk_user_data) & ~7ULL; /* low: SK_USER_DATA_* */
	return queue && s->queue == queue ? s : NULL;
}

/* Learns sk, the socket a sampled command's capsule is sent on (so an NVMe/TCP queue's: its
 * sk_user_data is the nvme_tcp_queue), unless it is known. Slots of closed sockets are never
 * freed, so a socket whose probe slots are all taken takes its home slot over (counted: a sampled
 * command in flight on the socket pushed out misses its receive stamps; that socket is learned
 * again with its next sampled capsule). */
static __always_inline void host_sock_learn(struct sock *sk, bool typed)
{
	struct host_sock *s = (struct host_sock *)ntprof_slot_find(&host_socks, (__u64)sk);
	__u64 queue = (__u64)NTPROF_READ(typed, sk, sk_user_data) & ~7ULL; /* low: SK_USER_DATA_* */
	bool pushed_out = false;

	if (!queue || (s && s->queue == queue))
		return;
	if (!s)
		s = (struct host_sock *)ntprof_slot_claim_or_take(&host_socks, (__u64)sk, &pushed_out);
	if (!s)
		return;
	if (pushed_out)
		ntprof_lose(NTPROF_LOSS_SOCKET_TABLE_FULL);
	/* new socket, or a freed one's address reused by a new queue: queue last, so a reader that
	 * matches it finds the rest set (see NTPROF_COMPILER_BARRIER) */
	struct nvme_tcp_queue___ntprof *q = (void *)queue;
	struct nvme_tcp_ctrl___ntprof *c = BPF_CORE_READ(q, ctrl);
	__u64 queues = (__u64)BPF_CORE_READ(c, queues);

	s->queue = 0;
	NTPROF_COMPILER_BARRIER();
	s->pdu = (__u64)BPF_CORE_READ(q, pdu);
	s->ctrl = BPF_CORE_READ(c, ctrl.instance);
	s->qid = (queue - queues) / bpf_core_type_size(struct nvme_tcp_queue___ntprof);
	s->hdr_len = NTPROF_PDU_SMALL_HLEN + (BPF_CORE_READ(q, hdr_digest) ? NTPROF_PDU_DIGEST_LEN : 0);
	NTPROF_COMPILER_BARRIER();
	s->queue = queue;
}

/* ---- H2, H_DATA_SENT: a sampled command's PDU header queued to the device ---- */

static __always_inline void host_command_sampled(struct request *rq, const void *cmd)
{
	/* nvme_tcp_init_request points nvme_req(rq)->cmd, the SQE the tracepoint names, at the
	 * capsule's SQE in the request's PDU buffer (struct nvme_tcp_cmd_pdu: the 8-byte common
	 * header, then the SQE): the buffer's address without reading nvme_tcp_request.pdu (a probe
	 * read, the command being reached through blk_mq_rq_to_pdu). */
	__u64 pdu = cmd ? ntprof_as_number(cmd) - NTPROF_PDU_HDR_LEN : 0;
	/* nvme_tcp_req_data_pdu(): the H2CData header is built at the back of the same buffer (since
	 * Linux 5.17, so capsule and data header can coexist), earlier kernels at its start */
	__u64 data_pdu = pdu + NTPROF_PDU_CMD_HLEN - NTPROF_PDU_SMALL_HLEN;
	__u64 r = (__u64)rq;

	if (!pdu || ntprof_index_get(&pdu_requests, pdu) == r)
		return; /* a request's buffer is noted once: a lookup after that */
	ntprof_index_put(&pdu_requests, pdu, r);
	ntprof_index_put(&pdu_requests, data_pdu, r);
}

/* A PDU of a sampled command may begin at first_byte, in an skb queued to a device: if that is the
 * command's PDU buffer holding its capsule or H2CData header, stamp it, and learn the socket its
 * reply will come on (the skb's). */
static __always_inline void host_pdu_queued(struct sk_buff *skb, __u64 first_byte, __u64 *now)
{
	__u64 rq = ntprof_index_get(&pdu_requests, first_byte);
	struct ntprof_record *rec;
	__u8 h[12];

	if (!rq)
		return;
	rec = host_lookup_request((struct request *)rq);
	if (!rec || bpf_probe_read_kernel(h, sizeof(h), (void *)first_byte))
		return;
	if (h[0] == NTPROF_PDU_CMD && h[2] == NTPROF_PDU_CMD_HLEN &&
	    *(__u16 *)&h[8 + NTPROF_SQE_CID] == rec->cid) {
		if (!rec->stamps[NTPROF_H2_CAPSULE_SENT])
			rec->stamps[NTPROF_H2_CAPSULE_SENT] = ntprof_now_once(now);
		if (*(__u32 *)&h[4] > NTPROF_PDU_CMD_HLEN + 2 * NTPROF_PDU_DIGEST_LEN)
			rec->flags |= NTPROF_F_INCAPSULE;
		host_sock_learn(BPF_CORE_READ(skb, sk), false);
	} else if (h[0] == NTPROF_PDU_H2C_DATA && h[2] == NTPROF_PDU_SMALL_HLEN &&
		   *(__u16 *)&h[NTPROF_PDU_DATA_CID] == rec->cid) {
		/* the last H2CData PDU wins */
		rec->stamps[NTPROF_H_DATA_SENT] = ntprof_now_once(now);
	}
}

/* The most capsules one merged fragment is searched for (see below). */
#define NTPROF_MERGED_CAPSULES_MAX 16

/* A page fragment of an skb queued to a device. Capsule buffers are allocated one after another
 * in memory (nvme_tcp_init_request), so when a request's capsule goes out right after the one of
 * the request allocated just before it, TCP merges the two into one fragment (at QD > 1). A
 * fragment that is a whole number of capsules (72 bytes, 76 with header digests) is searched at
 * each capsule; any other fragment (a capsule with in-capsule data, an H2CData header, data) is
 * looked up at its first byte. */
static __always_inline void pdu_fragment_queued(struct sk_buff *skb, __u64 first_byte, __u32 len,
						__u64 *now)
{
	__u32 stride = NTPROF_PDU_CMD_HLEN;

	if (len % stride)
		stride = NTPROF_PDU_CMD_HLEN + NTPROF_PDU_DIGEST_LEN;
	__u32 capsules = len % stride ? 1 : len / stride;

	for (__u32 j = 0; j < NTPROF_MERGED_CAPSULES_MAX && j < capsules; j++)
		host_pdu_queued(skb, first_byte + j * stride, now);
}

/* ---- H3: reply PDU headers ---- */

/* The known NVMe/TCP socket skb was received on, if `to` is inside its queue's PDU header buffer
 * (where nvme_tcp_recv_skb copies headers to), else NULL. Frag-list skbs, which skb_copy_bits
 * recurses into with the same destination, have no socket: only the driver's own call matches. */
static __always_inline struct host_sock *host_header_copy(struct sk_buff *skb, __u64 to, bool typed)
{
	struct sock *sk = NTPROF_READ(typed, skb, sk);
	struct host_sock *s = sk ? host_sock_find(sk, typed) : NULL;

	return s && to >= s->pdu && to < s->pdu + s->hdr_len ? s : NULL;
}

/* skb_copy_bits(skb, offset, to, len) returned ret: if it completed a PDU header in the receive
 * buffer of the queue the skb came on, stamp the command it names. */
static __always_inline void on_skb_copy_bits(struct sk_buff *skb, void *to, int len, int ret,
					     bool typed)
{
	struct host_sock *s;
	__u64 at = (__u64)to;
	struct ntprof_record *rec;
	__u8 h[NTPROF_PDU_SMALL_HLEN];
	__u16 cid;
	__u64 now;

	/* Most calls are not nvme_tcp's, and most of nvme_tcp's come while nothing sampled is in
	 * flight: one array read for them. A reply can only name a command sent before it, so one to
	 * a sampled command comes after the gate opened, on a socket its capsule's send taught. */
	if (ntprof_nothing_sampled_in_flight())
		return;
	s = host_header_copy(skb, at, typed);
	if (!s || ret || at - s->pdu + len != s->hdr_len)
		return;
	if (bpf_probe_read_kernel(h, sizeof(h), (void *)s->pdu))
		return;
	if (h[0] == NTPROF_PDU_RSP)
		cid = *(__u16 *)&h[NTPROF_PDU_RSP_CID];
	else if (h[0] == NTPROF_PDU_C2H_DATA || h[0] == NTPROF_PDU_R2T)
		cid = *(__u16 *)&h[NTPROF_PDU_DATA_CID];
	else
		return;
	rec = host_lookup_cid(s->ctrl, s->qid, cid);
	if (!rec)
		return;
	now = bpf_ktime_get_ns();
	if (h[0] == NTPROF_PDU_R2T) {
		if (!rec->stamps[NTPROF_H_R2T_RECEIVED])
			rec->stamps[NTPROF_H_R2T_RECEIVED] = now;
		rec->flags |= NTPROF_F_R2T;
		return;
	}
	if (!rec->stamps[NTPROF_H3_REPLY_RECEIVED])
		rec->stamps[NTPROF_H3_REPLY_RECEIVED] = now;
	if (h[0] == NTPROF_PDU_RSP || (h[1] & NTPROF_PDU_F_DATA_SUCCESS))
		rec->stamps[NTPROF_H_RESPONSE_RECEIVED] = now;
}

NTPROF_STAMPING_PROG(skb_copy_bits_fexit, "fexit/skb_copy_bits", true,
		     (struct sk_buff *skb, int offset, void *to, int len, int ret), 1,
		     ({ on_skb_copy_bits(skb, to, len, ret, true); 0; }))

SEC("kprobe/skb_copy_bits")
int BPF_KPROBE(skb_copy_bits_kprobe, struct sk_buff *skb, int offset, void *to, int len)
{
	/* save only the copies that can matter: most skb_copy_bits calls are not ours */
	if (!ntprof_nothing_sampled_in_flight() && host_header_copy(skb, (__u64)to, false))
		ntprof_save_args(HOOK_SKB_COPY_BITS, ctx, (__u64)skb, (__u64)to, len, 0, 0);
	return 0;
}

SEC("kretprobe/skb_copy_bits")
int BPF_KRETPROBE(skb_copy_bits_kretprobe, int ret)
{
	struct ntprof_saved_key k;
	struct ntprof_saved_args *a = ntprof_saved_args(HOOK_SKB_COPY_BITS, ctx, &k);

	if (!a)
		return 0;
	on_skb_copy_bits((void *)a->arg[0], (void *)a->arg[1], (int)a->arg[2], ret, false);
	bpf_map_delete_elem(&kprobe_args, &k);
	return 0;
}
