/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_tcp_send.h - the NVMe/TCP send plumbing both sides share: the programs on the kernel's
 * socket send calls, which find the calls that begin handing a sampled command's PDU to TCP.
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
 * How a sampled command's PDU is recognised: both drivers build every PDU header of a command in a
 * buffer the command owns (host: nvme_tcp_request.pdu, the capsule at its start and each H2CData
 * header at its back; target: nvmet_tcp_cmd.rsp_pdu, .data_pdu, .r2t_pdu) and hand it to TCP with
 * a call whose first byte is the buffer's first byte. The side notes those addresses when a command is sampled (the
 * host at H1, the target at T1), so a send call begins a sampled command's PDU exactly when its
 * first byte is one of them and the header there names the command's cid. Every other send on the
 * machine costs one array read while no sampled command is in flight (at 1 in 100 and QD1, 99 % of
 * the time), else that array read and one hash lookup by address. No PDU stream is followed for
 * unsampled traffic. A call that continues a header TCP took only part of begins inside the buffer
 * and is not matched: the entry of the call that began the header stays.
 *
 * The including object defines, before including this header:
 *   void tcp_send_begins(struct socket *sock, __u64 first_byte)
 *       a send call on sock is entered that hands bytes starting at kernel address first_byte;
 *       called only while a sampled command is in flight.
 * and, when it needs the calls' returns (define NTPROF_TCP_SEND_RETURNS: the target, which emits a
 * record once its last PDU is handed to TCP):
 *   void tcp_send_returned(struct socket *sock, long ret)
 *       that call returned ret (bytes handed to TCP, or an error); also only while a sampled command
 *       is in flight.
 * Without NTPROF_TCP_SEND_RETURNS only the entry programs exist (fentry / kprobe): the host stamps
 * at entry and pays no trampoline at return.
 */
#ifndef NTPROF_TCP_SEND_H
#define NTPROF_TCP_SEND_H

static __always_inline void tcp_send_begins(struct socket *sock, __u64 first_byte);
#ifdef NTPROF_TCP_SEND_RETURNS
static __always_inline void tcp_send_returned(struct socket *sock, long ret);
#endif

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

/* Entry of a send call on sock: first_byte is evaluated only while a sampled command is in
 * flight. */
#define NTPROF_TCP_SEND_BEGINS(sock, first_byte)                                      \
	({                                                                            \
		if (!ntprof_nothing_sampled_in_flight())                              \
			tcp_send_begins((sock), (first_byte));                        \
		0;                                                                    \
	})

/* The fentry program every side has. */
#define NTPROF_TCP_SEND_FENTRY(fn, params, first_byte)                                  \
	SEC("fentry/" #fn)                                                              \
	int BPF_PROG(fn##_fentry, NTPROF_UNPAREN params)                                \
	{                                                                               \
		return NTPROF_TCP_SEND_BEGINS(sock, first_byte);                        \
	}

#ifdef NTPROF_TCP_SEND_RETURNS
/* fentry + fexit, and kprobe + kretprobe (the kprobe saves the socket for its kretprobe, and only
 * while a sampled command is in flight: a kretprobe without saved arguments does nothing). */
#define NTPROF_TCP_SEND_HOOK(fn, saved_key, params, first_byte)                         \
	NTPROF_TCP_SEND_FENTRY(fn, params, first_byte)                                  \
	SEC("fexit/" #fn)                                                               \
	int BPF_PROG(fn##_fexit, NTPROF_UNPAREN params, int ret)                        \
	{                                                                               \
		if (!ntprof_nothing_sampled_in_flight())                                \
			tcp_send_returned(sock, ret);                                   \
		return 0;                                                               \
	}                                                                               \
	SEC("kprobe/" #fn)                                                              \
	int BPF_KPROBE(fn##_kprobe, NTPROF_UNPAREN params)                              \
	{                                                                               \
		if (ntprof_nothing_sampled_in_flight())                                 \
			return 0;                                                       \
		tcp_send_begins(sock, first_byte);                                      \
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
		tcp_send_returned((struct socket *)a->arg[0], ret);                     \
		bpf_map_delete_elem(&kprobe_args, &k);                                  \
		return 0;                                                               \
	}
#else
/* fentry, and kprobe: the entry is all the side needs. */
#define NTPROF_TCP_SEND_HOOK(fn, saved_key, params, first_byte)                         \
	NTPROF_TCP_SEND_FENTRY(fn, params, first_byte)                                  \
	SEC("kprobe/" #fn)                                                              \
	int BPF_KPROBE(fn##_kprobe, NTPROF_UNPAREN params)                              \
	{                                                                               \
		return NTPROF_TCP_SEND_BEGINS(sock, first_byte);                        \
	}
#endif

NTPROF_TCP_SEND_HOOK(kernel_sendpage, NTPROF_SAVED_KERNEL_SENDPAGE,
		     (struct socket *sock, struct page *page, int offset, size_t size, int flags),
		     (__u64)ntprof_page_address(ntprof_as_number(page)) + offset)
NTPROF_TCP_SEND_HOOK(kernel_sendmsg, NTPROF_SAVED_KERNEL_SENDMSG,
		     (struct socket *sock, struct msghdr *msg, struct kvec *vec, size_t num,
		      size_t size),
		     (__u64)BPF_CORE_READ(vec, iov_base))
NTPROF_TCP_SEND_HOOK(sock_sendmsg, NTPROF_SAVED_SOCK_SENDMSG, (struct socket *sock, struct msghdr *msg),
		     ntprof_msg_first_byte(msg))

#endif /* NTPROF_TCP_SEND_H */
