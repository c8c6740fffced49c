// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target_tcp.bpf.c - NVMe/TCP target (nvmet_tcp + nvmet core + the backing block device).
 *
 *   T0  kernel_recvmsg return inside nvmet_tcp_try_recv_pdu: the command capsule header complete in
 *       queue->pdu; the sampling decision is taken here, on the SQE inside the capsule
 *   T1  tracepoint nvmet:nvmet_req_init
 *   T2  nvmet_bdev_execute_rw / nvmet_file_execute_rw entry (handed to the backend)
 *   T3  tracepoint nvmet:nvmet_req_complete
 *   T4  nvmet_tcp_queue_response entry after T3 (R2T writes also call it earlier, for the R2T)
 *   T5  kernel_sendpage / kernel_sendmsg: the ENTRY of the call that hands the header of the first
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
#include <bpf/bpf_endian.h>

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

struct target_sock {
	__u64 queue;     /* struct nvmet_tcp_queue * (= sk->sk_user_data), checked on every use */
	__u64 pdu;       /* &queue->pdu: where PDU headers are received */
	__u64 sq;        /* &queue->nvme_sq */
	__s32 remaining; /* bytes of the PDU being sent not yet handed to TCP */
	__u16 cur_cid;
	__u8 cur_type;
	__u8 cur_flags;
	__u64 call_start_ns; /* entry of the send call in progress (one sender per queue) */
	__u64 pdu_start_ns;  /* entry of the send call that handed the current PDU's first byte */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NTPROF_MAX_SOCKETS);
	__type(key, __u64);
	__type(value, struct target_sock);
} target_socks SEC(".maps");

enum target_kprobe_hook {
	HOOK_KERNEL_RECVMSG = 1,
	HOOK_KERNEL_SENDPAGE = 2,
	HOOK_KERNEL_SENDMSG = 3,
};

#define PDU_BUF_MAX 128 /* sizeof(union nvme_tcp_pdu) is 72 + digest; anything inside is a header */

static __always_inline struct ntprof_target_inflight *target_lookup(__u64 sq, __u16 cid)
{
	struct ntprof_target_key k = { .sq = sq, .cid = cid };

	return bpf_map_lookup_elem(&inflight, &k);
}

static __always_inline struct ntprof_target_inflight *target_lookup_req(void *req)
{
	__u64 r = (__u64)req;
	struct ntprof_target_key *k = bpf_map_lookup_elem(&req_index, &r);

	return k ? bpf_map_lookup_elem(&inflight, k) : NULL;
}

static __always_inline void target_forget(struct ntprof_target_inflight *v, __u64 sq, __u16 cid)
{
	struct ntprof_target_key k = { .sq = sq, .cid = cid };
	__u64 req = v->req;

	if (req)
		bpf_map_delete_elem(&req_index, &req);
	bpf_map_delete_elem(&inflight, &k);
}

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
	struct nvmet_sq___ntprof *sq = (void *)s->sq;
	struct ntprof_sqe sqe;
	__u16 qid;

	if (ntprof_read_sqe((void *)(s->pdu + NTPROF_PDU_HDR_LEN), &sqe) ||
	    sqe.opcode == NTPROF_OPC_FABRICS)
		return;
	if (!ntprof_is_sampled(sqe.opcode, sqe.nsid, sqe.slba, sqe.nlb, sqe.cid))
		return;
	qid = BPF_CORE_READ(sq, qid);
	if (!qid)
		return; /* admin queue: not profiled (the host side skips it too) */

	struct ntprof_target_inflight v = {
		.rec = {
			.slba = sqe.slba,
			.nsid = sqe.nsid,
			.nlb = sqe.nlb,
			.bytes = sqe.data_len,
			.flags = (ntprof_opcode_is_write(sqe.opcode) ? NTPROF_F_WRITE : 0) |
				 (plen > NTPROF_PDU_CMD_HLEN + hd + NTPROF_PDU_DIGEST_LEN ?
					  NTPROF_F_INCAPSULE : 0),
			.qid = qid,
			.cid = sqe.cid,
			.opcode = sqe.opcode,
			.role = NTPROF_ROLE_TARGET,
			.transport = NTPROF_TRANSPORT_TCP,
			.stack = NTPROF_STACK_KERNEL,
		},
	};
	v.rec.stamps[NTPROF_T0_CAPSULE_RECEIVED] = bpf_ktime_get_ns();
	struct ntprof_target_key k = { .sq = s->sq, .cid = sqe.cid };
	if (bpf_map_update_elem(&inflight, &k, &v, BPF_ANY))
		ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
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

static __always_inline int on_nvmet_req_init(struct nvmet_req___ntprof *req,
					     struct nvmet_sq___ntprof *sq)
{
	__u16 cid;
	struct ntprof_target_inflight *v;

	if (bpf_probe_read_kernel(&cid, sizeof(cid), BPF_CORE_READ(req, cmd) + NTPROF_SQE_CID))
		return 0;
	v = target_lookup((__u64)sq, cid);
	if (!v)
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
	return 0;
}

SEC("tp_btf/nvmet_req_init")
int BPF_PROG(nvmet_req_init_tp, struct nvmet_req___ntprof *req, void *cmd)
{
	return on_nvmet_req_init(req, BPF_CORE_READ(req, sq));
}

SEC("raw_tp/nvmet_req_init")
int BPF_PROG(nvmet_req_init_rawtp, struct nvmet_req___ntprof *req, void *cmd)
{
	return on_nvmet_req_init(req, BPF_CORE_READ(req, sq));
}

SEC("fentry/nvmet_req_init")
int BPF_PROG(nvmet_req_init_fentry, struct nvmet_req___ntprof *req, void *cq,
	     struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq);
}

SEC("kprobe/nvmet_req_init")
int BPF_KPROBE(nvmet_req_init_kprobe, struct nvmet_req___ntprof *req, void *cq,
	       struct nvmet_sq___ntprof *sq)
{
	return on_nvmet_req_init(req, sq);
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

SEC("fentry/nvmet_bdev_execute_rw")
int BPF_PROG(nvmet_bdev_execute_rw_fentry, struct nvmet_req___ntprof *req)
{
	return on_backend_submit(req);
}

SEC("kprobe/nvmet_bdev_execute_rw")
int BPF_KPROBE(nvmet_bdev_execute_rw_kprobe, struct nvmet_req___ntprof *req)
{
	return on_backend_submit(req);
}

SEC("fentry/nvmet_file_execute_rw")
int BPF_PROG(nvmet_file_execute_rw_fentry, struct nvmet_req___ntprof *req)
{
	return on_backend_submit(req);
}

SEC("kprobe/nvmet_file_execute_rw")
int BPF_KPROBE(nvmet_file_execute_rw_kprobe, struct nvmet_req___ntprof *req)
{
	return on_backend_submit(req);
}

/* ---- drive issue / done: the request whose bio nvmet_bdev_execute_rw aimed (bi_private = req) ---- */
static __always_inline struct ntprof_target_inflight *target_lookup_rq(struct request *rq)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);

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

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue_tp, struct request *rq)
{
	return on_block_rq_issue(rq);
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(block_rq_issue_rawtp, struct request *rq)
{
	return on_block_rq_issue(rq);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete_tp, struct request *rq)
{
	return on_block_rq_complete(rq);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(block_rq_complete_rawtp, struct request *rq)
{
	return on_block_rq_complete(rq);
}

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

SEC("tp_btf/nvmet_req_complete")
int BPF_PROG(nvmet_req_complete_tp, struct nvmet_req___ntprof *req)
{
	return on_nvmet_req_complete(req, cqe_status(req));
}

SEC("raw_tp/nvmet_req_complete")
int BPF_PROG(nvmet_req_complete_rawtp, struct nvmet_req___ntprof *req)
{
	return on_nvmet_req_complete(req, cqe_status(req));
}

SEC("fentry/nvmet_req_complete")
int BPF_PROG(nvmet_req_complete_fentry, struct nvmet_req___ntprof *req, __u16 status)
{
	return on_nvmet_req_complete(req, status);
}

SEC("kprobe/nvmet_req_complete")
int BPF_KPROBE(nvmet_req_complete_kprobe, struct nvmet_req___ntprof *req, __u16 status)
{
	return on_nvmet_req_complete(req, status);
}

/* ---- T4: response queued ---- */
static __always_inline int on_queue_response(struct nvmet_req___ntprof *req)
{
	struct ntprof_target_inflight *v = target_lookup_req(req);

	/* before T3 this call queued an R2T, not the response */
	if (v && v->rec.stamps[NTPROF_T3_BACKEND_DONE])
		v->rec.stamps[NTPROF_T4_RESPOND] = bpf_ktime_get_ns();
	return 0;
}

SEC("fentry/nvmet_tcp_queue_response")
int BPF_PROG(nvmet_tcp_queue_response_fentry, struct nvmet_req___ntprof *req)
{
	return on_queue_response(req);
}

SEC("kprobe/nvmet_tcp_queue_response")
int BPF_KPROBE(nvmet_tcp_queue_response_kprobe, struct nvmet_req___ntprof *req)
{
	return on_queue_response(req);
}

/* ---- T5: reply PDUs handed to TCP ---- */

/* Entry of a send on any socket: remember when, if it is one of ours. */
static __always_inline void target_on_send_entry(struct socket *sock)
{
	struct target_sock *s = target_sock_get(BPF_CORE_READ(sock, sk));

	if (s)
		s->call_start_ns = bpf_ktime_get_ns();
}

static __always_inline void target_on_send(struct sock *sk, const void *start, long sent)
{
	struct target_sock *s;
	struct ntprof_target_inflight *v;
	__u64 now;

	if (sent <= 0)
		return;
	s = target_sock_get(sk);
	if (!s)
		return;
	if (s->remaining <= 0) {
		__u8 h[NTPROF_PDU_SMALL_HLEN];

		if (bpf_probe_read_kernel(h, sizeof(h), start))
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
		s->pdu_start_ns = s->call_start_ns;
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

SEC("fentry/kernel_sendpage")
int BPF_PROG(kernel_sendpage_fentry, struct socket *sock)
{
	target_on_send_entry(sock);
	return 0;
}

SEC("fexit/kernel_sendpage")
int BPF_PROG(kernel_sendpage_fexit, struct socket *sock, struct page *page, int offset, size_t size,
	     int flags, int ret)
{
	if (ret > 0)
		target_on_send(BPF_CORE_READ(sock, sk), ntprof_page_address(ntprof_arg_u64(ctx, 1)) + offset,
			       ret);
	return 0;
}

SEC("kprobe/kernel_sendpage")
int BPF_KPROBE(kernel_sendpage_kprobe, struct socket *sock, struct page *page, int offset)
{
	target_on_send_entry(sock);
	ntprof_save_args(HOOK_KERNEL_SENDPAGE, ctx, (__u64)sock, (__u64)page, offset, 0, 0);
	return 0;
}

SEC("kretprobe/kernel_sendpage")
int BPF_KRETPROBE(kernel_sendpage_kretprobe, int ret)
{
	struct ntprof_saved_key k;
	struct ntprof_saved_args *a = ntprof_saved_args(HOOK_KERNEL_SENDPAGE, ctx, &k);

	if (!a)
		return 0;
	struct socket *sock = (void *)a->arg[0];

	if (ret > 0)
		target_on_send(BPF_CORE_READ(sock, sk),
			       ntprof_page_address(a->arg[1]) + (int)a->arg[2], ret);
	bpf_map_delete_elem(&kprobe_args, &k);
	return 0;
}

SEC("fentry/kernel_sendmsg")
int BPF_PROG(kernel_sendmsg_fentry, struct socket *sock)
{
	target_on_send_entry(sock);
	return 0;
}

SEC("fexit/kernel_sendmsg")
int BPF_PROG(kernel_sendmsg_fexit, struct socket *sock, struct msghdr *msg, struct kvec *vec,
	     size_t num, size_t size, int ret)
{
	if (ret > 0)
		target_on_send(BPF_CORE_READ(sock, sk), BPF_CORE_READ(vec, iov_base), ret);
	return 0;
}

SEC("kprobe/kernel_sendmsg")
int BPF_KPROBE(kernel_sendmsg_kprobe, struct socket *sock, struct msghdr *msg, struct kvec *vec)
{
	target_on_send_entry(sock);
	ntprof_save_args(HOOK_KERNEL_SENDMSG, ctx, (__u64)sock, (__u64)vec, 0, 0, 0);
	return 0;
}

SEC("kretprobe/kernel_sendmsg")
int BPF_KRETPROBE(kernel_sendmsg_kretprobe, int ret)
{
	struct ntprof_saved_key k;
	struct ntprof_saved_args *a = ntprof_saved_args(HOOK_KERNEL_SENDMSG, ctx, &k);

	if (!a)
		return 0;
	struct socket *sock = (void *)a->arg[0];
	struct kvec *vec = (void *)a->arg[1];

	if (ret > 0)
		target_on_send(BPF_CORE_READ(sock, sk), BPF_CORE_READ(vec, iov_base), ret);
	bpf_map_delete_elem(&kprobe_args, &k);
	return 0;
}
