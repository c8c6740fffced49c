/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_tcp_xmit.h - where both NVMe/TCP sides see a sampled command's PDUs leave: the page
 * fragments of the skbs queued to a network device (tracepoint net:net_dev_queue).
 *
 * Both drivers build every PDU header of a command in a buffer the command owns (host:
 * nvme_tcp_request.pdu, the capsule at its start and each H2CData header at its back; target:
 * nvmet_tcp_cmd.rsp_pdu, .data_pdu, .r2t_pdu) and hand it to TCP as a page fragment of its own
 * (kernel_sendpage() before Linux 6.5, sock_sendmsg() with MSG_SPLICE_PAGES after). TCP keeps it as
 * a fragment of the skb it goes out in, beginning at the buffer's first byte, unless it continues
 * the fragment before it in memory: then the two merge (skb_can_coalesce). Each side notes its
 * buffers' addresses when a command is sampled (host at H1, target at T1), so a fragment that
 * begins at one of them (or, on the host, holds a run of merged capsules) carries that PDU, and
 * the header there names the command's cid.
 *
 * Why here and not at the socket send calls: one tracepoint run per skb (about 46 guest
 * instructions with the early return) where a trampoline on the send calls cost about 150 a call,
 * and a 4 KiB read's reply took three calls (docs/overhead.md, "The third cut"). And the moment is
 * the one the network stage should begin at: the PDU leaves TCP for the device, so the sender's
 * TCP send path counts in its driver stage; the stage stays causal, as nothing of an skb reaches
 * the peer before it is queued. It is the same on every kernel: no send path to choose.
 *
 * The including object defines:
 *   void pdu_fragment_queued(struct sk_buff *skb, __u64 first_byte, __u32 len, __u64 *now,
 *                            bool typed)
 *       a page fragment of len bytes at kernel address first_byte is in skb, which is being
 *       queued to a device; called only while a sampled command is in flight. *now is the moment
 *       (ntprof_now_once(now) takes it once for the whole skb); typed: skb's (see NTPROF_READ).
 */
#ifndef NTPROF_TCP_XMIT_H
#define NTPROF_TCP_XMIT_H

#include "ntprof_skb.h"

static __always_inline void pdu_fragment_queued(struct sk_buff *skb, __u64 first_byte, __u32 len,
						__u64 *now, bool typed);

/* skb is queued to a network device: hand each of its page fragments to the side. TCP's headers
 * are in the skb's linear part; the PDUs the drivers hand over as pages are all in fragments. */
static __always_inline int on_net_dev_queue(struct sk_buff *skb, bool typed)
{
	struct skb_shared_info *shinfo = ntprof_skb_shinfo(skb, typed);
	__u64 frags = (__u64)shinfo + bpf_core_field_offset(struct skb_shared_info, frags);
	__u32 nr_frags = BPF_CORE_READ(shinfo, nr_frags);
	__u64 now = 0;

	for (__u32 i = 0; i < NTPROF_SKB_FRAGS_MAX && i < nr_frags; i++) {
		__u32 len;
		__u64 first_byte =
			skb_frag_first_byte(frags + i * bpf_core_type_size(skb_frag_t), &len);

		pdu_fragment_queued(skb, first_byte, len, &now, typed);
	}
	return 0;
}

NTPROF_STAMPING_TRACEPOINT_HOOK(net_dev_queue, (struct sk_buff *skb), skb,
				on_net_dev_queue(skb, ntprof_typed))

#endif /* NTPROF_TCP_XMIT_H */
