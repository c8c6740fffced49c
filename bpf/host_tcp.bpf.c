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
 *   H3  nvme_tcp_recv_skb entry: the first reply PDU header (C2HData for reads, the response
 *       capsule otherwise) in the bytes of the skb the driver is about to read, found by walking
 *       them from the queue's receive state (the queue is the call's desc->arg.data)
 *   H4  = H5: nvme_complete_rq ends the request in the same call chain (one program
 *       run per I/O less; the status is read at H5)
 *   H5  tracepoint block:block_rq_complete     the record is emitted here
 * Devices are namespace heads (nvme0n1) even with native multipath, where requests run on hidden
 * path disks that have no dev_t in sysfs.
 *   components: response capsule header (H_RESPONSE_RECEIVED), first R2T header (H_R2T_RECEIVED),
 *   the last H2CData PDU queued to the device (H_DATA_SENT).
 *
 * Why nvme_tcp_recv_skb for H3: the driver's own receive helpers are inlined on Debian's kernels
 * (see docs/hooks.md), but the read_sock actor cannot be, and it runs once per skb (once or twice
 * per 4 KiB read) where skb_copy_bits, which copies each header out, ran 3 times.
 *
 * Variants (one is chosen per hook by the agent's HookPlan): _tp = tp_btf, _rawtp = raw tracepoint,
 * _fentry = BPF trampoline, _kprobe = kprobe.
 */
#include "ntprof_bpf_common.h"
#include "ntprof_host_block.h"
#define NTPROF_HOST_TRANSPORT NTPROF_TRANSPORT_TCP
#include "ntprof_nvme_host.h"
#include "ntprof_skb.h"
#include "ntprof_tcp_xmit.h"

/* What we know of one NVMe/TCP host queue, and of the socket it had when a sampled command's
 * capsule was last sent on it. Slots in an array (ntprof_slots.h), keyed by struct
 * nvme_tcp_queue *: a reply's walk starts from the queue the driver hands it (desc->arg.data), so
 * it finds this without a kernel read. A slot is never freed; a queue seen with another socket (a
 * reconnect allocates a new socket and a new header buffer) is read afresh. */
struct host_sock {
	__u64 key;       /* struct nvme_tcp_queue *; 0 = free */
	__u64 sk;        /* struct sock * (its sk_user_data is the queue); 0 while the fields below
			  * are being set */
	__u64 pdu;       /* queue->pdu: where the queue receives PDU headers (fixed for the socket's
			  * life) */
	__u32 ctrl;      /* nvmeN instance */
	__u16 qid;
	__u8 hdr_len;    /* a reply PDU header's length on this queue: 24 + header digest */
	__u8 data_digest; /* C2HData PDUs carry a data digest */
};

NTPROF_SLOT_ARRAY(host_socks, struct host_sock);

/* Where a sampled command's PDU headers are built (nvme_tcp_request.pdu: the capsule at its start,
 * H2CData headers at its back) -> its struct request *, an index (ntprof_slots.h).
 * The pair is fixed for the request's life, so entries are never deleted; a send that begins at an
 * address here still stamps only a command in the in-flight table whose cid its header names. */
NTPROF_INDEX_TABLE(pdu_requests);

/* ---- NVMe/TCP sockets ---- */

/* Learns the queue of sk, the socket a sampled command's capsule is sent on (an NVMe/TCP queue's:
 * its sk_user_data is the nvme_tcp_queue), unless it is known with this socket. Slots are never
 * freed, so a queue whose probe slots are all taken takes its home slot over (counted: a sampled
 * command in flight on the queue pushed out misses its receive stamps; that queue is learned again
 * with its next sampled capsule). typed: sk's (see NTPROF_READ). */
static __always_inline void host_sock_learn(struct sock *sk, bool typed)
{
	if (!sk) /* and the verifier of 6.12 types skb->sk as maybe-NULL */
		return;
	__u64 queue = (__u64)NTPROF_READ(typed, sk, sk_user_data) & ~7ULL; /* low: SK_USER_DATA_* */
	__u64 sk_number = ntprof_as_number(sk);
	struct host_sock *s = queue ? (struct host_sock *)ntprof_slot_find(&host_socks, queue) : NULL;
	bool pushed_out = false;

	if (!queue || (s && s->sk == sk_number))
		return;
	if (!s)
		s = (struct host_sock *)ntprof_slot_claim_or_take(&host_socks, queue, &pushed_out);
	if (!s)
		return;
	if (pushed_out)
		ntprof_lose(NTPROF_LOSS_SOCKET_TABLE_FULL);
	/* a new queue, or a known one on a new socket: the socket last, so a reader that finds it set
	 * finds the rest set (see NTPROF_COMPILER_BARRIER) */
	struct nvme_tcp_queue___ntprof *q = (void *)queue;
	struct nvme_tcp_ctrl___ntprof *c = BPF_CORE_READ(q, ctrl);
	__u64 queues = (__u64)BPF_CORE_READ(c, queues);

	s->sk = 0;
	NTPROF_COMPILER_BARRIER();
	s->pdu = (__u64)BPF_CORE_READ(q, pdu);
	s->ctrl = BPF_CORE_READ(c, ctrl.instance);
	s->qid = (queue - queues) / bpf_core_type_size(struct nvme_tcp_queue___ntprof);
	s->hdr_len = NTPROF_PDU_SMALL_HLEN + (BPF_CORE_READ(q, hdr_digest) ? NTPROF_PDU_DIGEST_LEN : 0);
	s->data_digest = BPF_CORE_READ(q, data_digest);
	NTPROF_COMPILER_BARRIER();
	s->sk = sk_number;
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
static __always_inline void host_pdu_queued(__u64 skb, __u64 first_byte, __u64 *now)
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
		host_sock_learn(BPF_CORE_READ((struct sk_buff *)skb, sk), false);
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
static __always_inline void pdu_fragment_queued(__u64 skb, __u64 first_byte, __u32 len,
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

/* What the programs learned of NVMe/TCP host queue q, or NULL. */
static __always_inline struct host_sock *host_sock_of_queue(__u64 q)
{
	struct host_sock *s = (struct host_sock *)ntprof_slot_find(&host_socks, q);

	return s && s->sk ? s : NULL;
}

/* nvme_tcp_queue's receive state, as the kernel lays it out: these four fields follow one another
 * in every kernel the project knows (tcp.c's "recv state"), so one probe read takes them where
 * four did; the layout is checked against the running kernel's at load time. */
struct queue_receive_state {
	__s32 pdu_remaining;
	__s32 pdu_offset;
	__u64 data_remaining;
	__u64 ddgst_remaining;
};

/* Reads queue's receive state into *out: one read where the kernel's layout is the one above,
 * else a read a field. 0, or nonzero when it cannot be read. */
static __always_inline long queue_receive_state_read(struct nvme_tcp_queue___ntprof *queue,
						     struct queue_receive_state *out)
{
	__u32 base = bpf_core_field_offset(struct nvme_tcp_queue___ntprof, pdu_remaining);

	/* relocated constants: the verifier keeps one branch */
	if (bpf_core_field_offset(struct nvme_tcp_queue___ntprof, pdu_offset) ==
		    base + offsetof(struct queue_receive_state, pdu_offset) &&
	    bpf_core_field_offset(struct nvme_tcp_queue___ntprof, data_remaining) ==
		    base + offsetof(struct queue_receive_state, data_remaining) &&
	    bpf_core_field_offset(struct nvme_tcp_queue___ntprof, ddgst_remaining) ==
		    base + offsetof(struct queue_receive_state, ddgst_remaining) &&
	    bpf_core_field_size(struct nvme_tcp_queue___ntprof, data_remaining) == 8 &&
	    bpf_core_field_size(struct nvme_tcp_queue___ntprof, ddgst_remaining) == 8)
		return bpf_probe_read_kernel(out, sizeof(*out), (void *)queue + base);
	out->pdu_remaining = BPF_CORE_READ(queue, pdu_remaining);
	out->pdu_offset = BPF_CORE_READ(queue, pdu_offset);
	out->data_remaining = BPF_CORE_READ(queue, data_remaining);
	out->ddgst_remaining = BPF_CORE_READ(queue, ddgst_remaining);
	return 0;
}

/* Where nvme_tcp_recv_skb() is in one skb of a queue's byte stream, walked the way it will walk
 * it: a PDU header (pdu_remaining bytes still to come, pdu_offset already in queue->pdu), then a
 * C2HData PDU's data (data_remaining) and data digest (ddgst_remaining). */
struct reply_scan {
	struct ntprof_skb_cursor bytes; /* where the skb's bytes are */
	__u64 pdu;              /* queue->pdu */
	__u64 now;
	__u64 data_remaining;
	__u64 ddgst_remaining;
	__u32 at, end;          /* skb offsets: the next unread byte, the end of what this call reads */
	__u32 pdu_remaining;
	__u32 pdu_offset;
	__u32 ctrl;
	__u16 qid;
	__u16 hdr_len;
	bool data_digest;
};

/* One byte of the header being read: header byte k, of which the first pdu_offset are already in
 * queue->pdu (the header began in an earlier skb) and the rest begin at skb offset c->at. */
static __always_inline bool reply_header_byte(struct reply_scan *c, __u32 k, __u8 *dst)
{
	__u32 avail;
	__u64 from = k < c->pdu_offset ? c->pdu + k
				       : ntprof_skb_byte_address(&c->bytes, c->at + k - c->pdu_offset,
								&avail);

	return from && !bpf_probe_read_kernel(dst, 1, (void *)from);
}

/* The fields of the header at c->at that the stamps need (type, flags, both cid places, the
 * C2HData data length) into h. Usually the whole header is in one piece of the skb: one read. */
static __always_inline bool reply_header_read(struct reply_scan *c,
					      __u8 h[NTPROF_PDU_SMALL_HLEN])
{
	const __u32 needed[] = {0,
				1,
				NTPROF_PDU_DATA_CID,
				NTPROF_PDU_DATA_CID + 1,
				NTPROF_PDU_C2H_DATA_LENGTH,
				NTPROF_PDU_C2H_DATA_LENGTH + 1,
				NTPROF_PDU_C2H_DATA_LENGTH + 2,
				NTPROF_PDU_C2H_DATA_LENGTH + 3,
				NTPROF_PDU_RSP_CID,
				NTPROF_PDU_RSP_CID + 1};
	__u32 avail = 0;
	__u64 from = c->pdu_offset ? 0 : ntprof_skb_byte_address(&c->bytes, c->at, &avail);

	if (from && avail >= NTPROF_PDU_SMALL_HLEN)
		return !bpf_probe_read_kernel(h, NTPROF_PDU_SMALL_HLEN, (void *)from);
	/* split between queue->pdu and the skb, or across two pieces of the skb: rare */
#pragma unroll
	for (int i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!reply_header_byte(c, needed[i], &h[needed[i]]))
			return false;
	return true;
}

/* A reply PDU header h arrived on the queue: stamp the sampled command it names. */
static __always_inline void reply_header_arrived(struct reply_scan *c,
						 const __u8 h[NTPROF_PDU_SMALL_HLEN])
{
	struct ntprof_record *rec;
	__u16 cid;

	if (h[0] == NTPROF_PDU_RSP)
		cid = *(__u16 *)&h[NTPROF_PDU_RSP_CID];
	else if (h[0] == NTPROF_PDU_C2H_DATA || h[0] == NTPROF_PDU_R2T)
		cid = *(__u16 *)&h[NTPROF_PDU_DATA_CID];
	else
		return;
	rec = host_lookup_cid(c->ctrl, c->qid, cid);
	if (!rec)
		return;
	__u64 now = ntprof_now_once(&c->now);
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

/* One step of the walk (a bpf_loop callback): skip to the next header, and if all of it is in
 * this call's bytes, read it and stamp. 1 stops the walk. */
static int reply_scan_step(__u32 index, struct reply_scan *c)
{
	__u32 left = c->end - c->at;
	__u8 h[NTPROF_PDU_SMALL_HLEN];

	if (!c->pdu_remaining) {
		/* in a C2HData PDU's data or data digest: the next header begins after them */
		__u64 skip = c->ddgst_remaining
				     ? c->ddgst_remaining
				     : c->data_remaining + (c->data_digest ? NTPROF_PDU_DIGEST_LEN : 0);

		if (skip >= left)
			return 1;
		c->at += skip;
		left -= skip;
		c->pdu_remaining = c->hdr_len;
		c->pdu_offset = 0;
		c->ddgst_remaining = 0;
	}
	/* a header that completes in a later skb is stamped by that skb's call; one the walk cannot
	 * read (beyond NTPROF_SKB_FRAG_LIST_MAX) ends it */
	if (c->pdu_remaining > left || !reply_header_read(c, h))
		return 1;
	reply_header_arrived(c, h);
	c->at += c->pdu_remaining;
	if (h[0] == NTPROF_PDU_C2H_DATA) {
		c->pdu_remaining = 0;
		c->data_remaining = *(__u32 *)&h[NTPROF_PDU_C2H_DATA_LENGTH];
	} else if (h[0] == NTPROF_PDU_RSP || h[0] == NTPROF_PDU_R2T) {
		c->pdu_remaining = c->hdr_len;
		c->pdu_offset = 0;
	} else {
		return 1; /* a PDU the host ends the queue on */
	}
	return 0;
}

/* The most PDU headers one skb is searched for: a 64 KiB GRO skb of 4 KiB read replies holds
 * about 30 (a C2HData and a response each). */
#define NTPROF_REPLY_HEADERS_MAX 64

/* nvme_tcp_recv_skb(desc, skb, offset, len) is about to read len bytes of skb from offset for
 * queue desc->arg.data: find the reply PDU headers among them and stamp the sampled commands
 * they name. The queue's receive state says where the first header begins; each header's type
 * and data length say where the next does. */
static __always_inline int on_nvme_tcp_recv_skb(read_descriptor_t *desc, struct sk_buff *skb,
						__u32 offset, __u64 len, bool typed)
{
	__u64 q;
	struct host_sock *s;
	struct queue_receive_state state;
	struct reply_scan c = {};

	/* A reply can only name a command sent before it, so one to a sampled command comes after
	 * the gate opened, on a queue its capsule's send taught. */
	if (ntprof_nothing_sampled_in_flight())
		return 0;
	q = (__u64)NTPROF_READ(typed, desc, arg.data);
	s = q ? host_sock_of_queue(q) : NULL;
	if (!s || queue_receive_state_read((void *)q, &state))
		return 0;
	ntprof_skb_cursor_init(&c.bytes, skb, typed);
	c.pdu = s->pdu;
	c.ctrl = s->ctrl;
	c.qid = s->qid;
	c.hdr_len = s->hdr_len;
	c.data_digest = s->data_digest;
	c.at = offset;
	c.end = offset + len;
	c.pdu_remaining = state.pdu_remaining;
	c.pdu_offset = state.pdu_offset;
	c.data_remaining = state.data_remaining;
	c.ddgst_remaining = state.ddgst_remaining;
	bpf_loop(NTPROF_REPLY_HEADERS_MAX, reply_scan_step, &c, 0);
	return 0;
}

NTPROF_STAMPING_ENTRY_HOOK(nvme_tcp_recv_skb,
			   (read_descriptor_t *desc, struct sk_buff *skb, unsigned int offset,
			    size_t len),
			   on_nvme_tcp_recv_skb(desc, skb, offset, len, ntprof_typed))
