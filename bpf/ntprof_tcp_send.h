/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_tcp_send.h - the NVMe/TCP send plumbing both sides share: the programs on the kernel's
 * socket send calls, which tell the side's code when a send call began, where its bytes start and
 * how many it handed to TCP. The host (host_tcp.bpf.c) and the target (target_tcp.bpf.c) follow
 * their PDU streams from there.
 *
 * Which call carries NVMe/TCP PDUs depends on the kernel:
 *   Linux < 6.5   kernel_sendpage(sock, page, offset, size, flags) for PDU headers and data, and
 *                 kernel_sendmsg(sock, msg, kvec, num, size) for digests and ICReq/ICResp;
 *   Linux >= 6.5  sock_sendmsg(sock, msg) with MSG_SPLICE_PAGES over a one-segment bvec iterator
 *                 for headers and data; digests still go through kernel_sendmsg, which calls
 *                 sock_sendmsg with a kvec iterator.
 * The agent attaches kernel_sendpage + kernel_sendmsg where kernel_sendpage exists and
 * sock_sendmsg alone where it does not (never both: kernel_sendmsg calls sock_sendmsg).
 *
 * What each send costs: kernel_sendpage's and kernel_sendmsg's arguments still say at their return
 * where the bytes began, so their fentry only notes the time on this CPU (no socket lookup, no
 * read) and the fexit does the rest, once. sock_sendmsg's iterator has moved on by its return, so
 * its entry looks the socket up and reads where the bytes begin, for NVMe/TCP sockets only. The
 * kprobe variants keep the entry's work at the entry (kretprobes see no arguments).
 *
 * The including object defines, before including this header:
 *   struct ntprof_tcp_send_state *tcp_send_state(struct sock *sk)
 *       the send state of sk when it is one of the side's NVMe/TCP sockets, else NULL. It must be
 *       cheap for every other socket: it runs on every send on the machine.
 *   void tcp_sent(struct sock *sk, struct ntprof_tcp_send_state *st, long sent)
 *       the send call that began at st->call_start_ns handed sent > 0 bytes, starting at kernel
 *       address st->call_start_addr, to TCP.
 */
#ifndef NTPROF_TCP_SEND_H
#define NTPROF_TCP_SEND_H

/* Where one socket's send call in progress began (a queue has one sender at a time). */
struct ntprof_tcp_send_state {
	__u64 call_start_ns;   /* entry of the send call in progress */
	__u64 call_start_addr; /* kernel address of its first byte; 0: not a buffer we can read */
};

static __always_inline struct ntprof_tcp_send_state *tcp_send_state(struct sock *sk);
static __always_inline void tcp_sent(struct sock *sk, struct ntprof_tcp_send_state *st, long sent);

/* The send call in progress on this CPU, from its fentry to its fexit: send calls run in process
 * context or a queue's io_work and do not nest on one CPU; should one ever have, the fexit sees
 * another socket here and leaves the PDU unstamped (the command then misses a stamp). */
struct ntprof_send_entry {
	__u64 sock;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ntprof_send_entry);
} send_entry SEC(".maps");

/* Saved-argument keys of the kprobe variants (above the sides' own keys). */
enum ntprof_tcp_send_hook {
	NTPROF_SAVED_KERNEL_SENDPAGE = 16,
	NTPROF_SAVED_KERNEL_SENDMSG = 17,
	NTPROF_SAVED_SOCK_SENDMSG = 18,
};

/* The first byte a msghdr's iterator will send: the kernel senders use one bvec (>= 6.5: the PDU
 * or a data page) or one kvec (digests); user memory (ubuf/iovec) is never an NVMe/TCP PDU. */
static __always_inline __u64 ntprof_msg_first_byte(struct msghdr *msg)
{
	__u8 type = BPF_CORE_READ(msg, msg_iter.iter_type);
	__u64 skip = BPF_CORE_READ(msg, msg_iter.iov_offset);

	if (type == bpf_core_enum_value(enum iter_type, ITER_BVEC)) {
		const struct bio_vec *bv = BPF_CORE_READ(msg, msg_iter.bvec);
		__u64 page = ntprof_as_number(BPF_CORE_READ(bv, bv_page));

		return (__u64)ntprof_page_address(page) + BPF_CORE_READ(bv, bv_offset) + skip;
	}
	if (type == bpf_core_enum_value(enum iter_type, ITER_KVEC))
		return (__u64)BPF_CORE_READ(msg, msg_iter.kvec, iov_base) + skip;
	return 0;
}

/* Entry of a send call on sock: note when, and where its bytes start (computed only for our
 * sockets: first_byte is evaluated after the socket check). */
#define NTPROF_TCP_SEND_BEGINS(sock, first_byte)                                      \
	({                                                                            \
		struct ntprof_tcp_send_state *st_ = tcp_send_state(BPF_CORE_READ(sock, sk)); \
		if (st_) {                                                            \
			st_->call_start_ns = bpf_ktime_get_ns();                      \
			st_->call_start_addr = (first_byte);                          \
		}                                                                     \
		0;                                                                    \
	})

/* Return of a send call on sock that handed ret bytes to TCP. */
/* A send call on sock returned ret: the send state of sock (its sock in *sk) when the call handed
 * bytes to TCP on one of the side's NVMe/TCP sockets; else NULL. */
static __always_inline struct ntprof_tcp_send_state *
ntprof_send_state_at_return(struct socket *sock, long ret, struct sock **sk)
{
	if (ret <= 0)
		return NULL;
	*sk = BPF_CORE_READ(sock, sk);
	return tcp_send_state(*sk);
}

/* Return of a send call whose entry noted time and address in the socket's state. */
static __always_inline void ntprof_tcp_send_returned(struct socket *sock, long ret)
{
	struct sock *sk = NULL;
	struct ntprof_tcp_send_state *st = ntprof_send_state_at_return(sock, ret, &sk);

	if (st && st->call_start_addr)
		tcp_sent(sk, st, ret);
}

/* fentry of a call whose arguments still tell at its return where its bytes began. */
static __always_inline void ntprof_note_send_entry(struct socket *sock)
{
	__u32 zero = 0;
	struct ntprof_send_entry *e = bpf_map_lookup_elem(&send_entry, &zero);

	if (e) {
		e->sock = (__u64)sock; /* a tracing program may keep a pointer's value (CAP_PERFMON) */
		e->ns = bpf_ktime_get_ns();
	}
}

/* The entry time ntprof_note_send_entry kept for sock on this CPU; 0 if another send overwrote it. */
static __always_inline __u64 ntprof_send_entry_ns(struct socket *sock)
{
	__u32 zero = 0;
	struct ntprof_send_entry *e = bpf_map_lookup_elem(&send_entry, &zero);

	return e && e->sock == (__u64)sock ? e->ns : 0;
}

/* fexit of such a call: the entry's time and where its bytes began (evaluated for NVMe/TCP sockets
 * only) go into the socket's state, then the stream is followed. */
#define NTPROF_TCP_SEND_DONE(sock, ret, first_byte)                                    \
	({                                                                            \
		struct sock *sk_ = NULL;                                              \
		struct ntprof_tcp_send_state *st_ = ntprof_send_state_at_return(sock, ret, &sk_); \
		if (st_) {                                                            \
			st_->call_start_ns = ntprof_send_entry_ns(sock);              \
			st_->call_start_addr = (first_byte);                          \
			if (st_->call_start_addr)                                     \
				tcp_sent(sk_, st_, ret);                              \
		}                                                                     \
		0;                                                                    \
	})

/* The kprobe + kretprobe pair of one send call (the kprobe does the entry's work and saves the
 * socket for its kretprobe). params is the call's whole parameter list, its first one `sock`. */
#define NTPROF_TCP_SEND_KPROBES(fn, saved_key, params, first_byte)                      \
	SEC("kprobe/" #fn)                                                              \
	int BPF_KPROBE(fn##_kprobe, NTPROF_UNPAREN params)                              \
	{                                                                               \
		NTPROF_TCP_SEND_BEGINS(sock, first_byte);                               \
		ntprof_save_args(saved_key, ctx, (__u64)sock, 0, 0, 0, 0);              \
		return 0;                                                               \
	}                                                                               \
	SEC("kretprobe/" #fn)                                                           \
	int BPF_KRETPROBE(fn##_kretprobe, int ret)                                      \
	{                                                                               \
		struct ntprof_saved_key k;                                              \
		struct ntprof_saved_args *a = ntprof_saved_args(saved_key, ctx, &k);    \
                                                                                        \
		if (!a)                                                                 \
			return 0;                                                       \
		ntprof_tcp_send_returned((struct socket *)a->arg[0], ret);              \
		bpf_map_delete_elem(&kprobe_args, &k);                                  \
		return 0;                                                               \
	}

/* The four programs of a send call whose arguments tell at its return where its bytes began:
 * fentry notes the time, fexit does the rest. */
#define NTPROF_TCP_SEND_HOOK(fn, saved_key, params, first_byte)                         \
	SEC("fentry/" #fn)                                                              \
	int BPF_PROG(fn##_fentry, NTPROF_UNPAREN params)                                \
	{                                                                               \
		ntprof_note_send_entry(sock);                                           \
		return 0;                                                               \
	}                                                                               \
	SEC("fexit/" #fn)                                                               \
	int BPF_PROG(fn##_fexit, NTPROF_UNPAREN params, int ret)                        \
	{                                                                               \
		return NTPROF_TCP_SEND_DONE(sock, ret, first_byte);                     \
	}                                                                               \
	NTPROF_TCP_SEND_KPROBES(fn, saved_key, params, first_byte)

/* The four programs of a send call whose bytes are only known at its entry: fentry looks the
 * socket up and notes time and address in its state, fexit follows the stream. */
#define NTPROF_TCP_SEND_HOOK_AT_ENTRY(fn, saved_key, params, first_byte)                \
	SEC("fentry/" #fn)                                                              \
	int BPF_PROG(fn##_fentry, NTPROF_UNPAREN params)                                \
	{                                                                               \
		return NTPROF_TCP_SEND_BEGINS(sock, first_byte);                        \
	}                                                                               \
	SEC("fexit/" #fn)                                                               \
	int BPF_PROG(fn##_fexit, NTPROF_UNPAREN params, int ret)                        \
	{                                                                               \
		ntprof_tcp_send_returned(sock, ret);                                    \
		return 0;                                                               \
	}                                                                               \
	NTPROF_TCP_SEND_KPROBES(fn, saved_key, params, first_byte)

NTPROF_TCP_SEND_HOOK(kernel_sendpage, NTPROF_SAVED_KERNEL_SENDPAGE,
		     (struct socket *sock, struct page *page, int offset, size_t size, int flags),
		     (__u64)ntprof_page_address(ntprof_as_number(page)) + offset)
NTPROF_TCP_SEND_HOOK(kernel_sendmsg, NTPROF_SAVED_KERNEL_SENDMSG,
		     (struct socket *sock, struct msghdr *msg, struct kvec *vec, size_t num,
		      size_t size),
		     (__u64)BPF_CORE_READ(vec, iov_base))
NTPROF_TCP_SEND_HOOK_AT_ENTRY(sock_sendmsg, NTPROF_SAVED_SOCK_SENDMSG,
		     (struct socket *sock, struct msghdr *msg), ntprof_msg_first_byte(msg))

#endif /* NTPROF_TCP_SEND_H */
