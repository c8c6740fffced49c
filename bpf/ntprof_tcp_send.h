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
 * The including object defines:
 *   void tcp_send_begins(struct socket *sock, __u64 first_byte, bool typed)
 *       a send call on sock is entered that hands bytes starting at kernel address first_byte;
 *       called only while a sampled command is in flight. typed: see NTPROF_READ.
 * Both sides stamp at the entry of a call, so the calls' returns have no program (no trampoline
 * at return).
 */
#ifndef NTPROF_TCP_SEND_H
#define NTPROF_TCP_SEND_H

static __always_inline void tcp_send_begins(struct socket *sock, __u64 first_byte, bool typed);

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

/* Entry of a send call on sock (fentry, and kprobe): first_byte is evaluated only while a sampled
 * command is in flight. */
#define NTPROF_TCP_SEND_HOOK(fn, params, first_byte)                                   \
	NTPROF_STAMPING_ENTRY_HOOK(fn, params,                                         \
			  ({                                                           \
				  if (!ntprof_nothing_sampled_in_flight())             \
					  tcp_send_begins(sock, (first_byte),          \
							  ntprof_typed);               \
				  0;                                                   \
			  }))

NTPROF_TCP_SEND_HOOK(kernel_sendpage,
		     (struct socket *sock, struct page *page, int offset, size_t size, int flags),
		     (__u64)ntprof_page_address(ntprof_as_number(page)) + offset)
NTPROF_TCP_SEND_HOOK(kernel_sendmsg,
		     (struct socket *sock, struct msghdr *msg, struct kvec *vec, size_t num,
		      size_t size),
		     (__u64)BPF_CORE_READ(vec, iov_base))
NTPROF_TCP_SEND_HOOK(sock_sendmsg, (struct socket *sock, struct msghdr *msg),
		     ntprof_msg_first_byte(msg))

#endif /* NTPROF_TCP_SEND_H */
