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
 * The fragments are walked by bpf_loop: its callback is verified once, apart from the program, so
 * each fragment's descriptor is one probe read (skb_frag_first_byte_one_read) where an unrolled or
 * bounded loop of that read was refused by the verifiers of 6.1 and 6.12 and had to read it a
 * field at a time, three reads (docs/overhead.md, "The sixth cut").
 *
 * The including object defines:
 *   void pdu_fragment_queued(__u64 skb, __u64 first_byte, __u32 len, __u64 *now)
 *       a page fragment of len bytes at kernel address first_byte is in skb (a struct sk_buff *
 *       as a number: the loop's callback has no typed pointer), which is being queued to a
 *       device; called only while a sampled command is in flight. *now is the moment
 *       (ntprof_now_once(now) takes it once for the whole skb).
 */
#ifndef NTPROF_TCP_XMIT_H
#define NTPROF_TCP_XMIT_H

#include "ntprof_skb.h"

static __always_inline void pdu_fragment_queued(__u64 skb, __u64 first_byte, __u32 len,
						__u64 *now);

/* What net_dev_queue's walk carries from one fragment to the next: bpf_loop's context. */
struct ntprof_xmit_walk {
	__u64 skb;   /* struct sk_buff *, as a number */
	__u64 frags; /* address of skb_shinfo(skb)->frags[0] */
	__u64 now;   /* ntprof_now_once's */
};

/* The i-th fragment of the walk's skb: bpf_loop's callback (0: go on). */
static long ntprof_xmit_fragment(__u32 i, void *ctx)
{
	struct ntprof_xmit_walk *w = ctx;
	__u32 len = 0;
	__u64 first_byte = skb_frag_first_byte_one_read(
		w->frags + (__u64)i * bpf_core_type_size(skb_frag_t), &len);

	if (first_byte)
		pdu_fragment_queued(w->skb, first_byte, len, &w->now);
	return 0;
}

/* skb is queued to a network device: hand each of its page fragments to the side. TCP's headers
 * are in the skb's linear part; the PDUs the drivers hand over as pages are all in fragments. */
static __always_inline int on_net_dev_queue(struct sk_buff *skb, bool typed)
{
	struct skb_shared_info *shinfo = ntprof_skb_shinfo(skb, typed);
	__u32 nr_frags = BPF_CORE_READ(shinfo, nr_frags);
	struct ntprof_xmit_walk walk = {
		.skb = ntprof_as_number(skb),
		.frags = (__u64)shinfo + bpf_core_field_offset(struct skb_shared_info, frags),
	};

	if (nr_frags > NTPROF_SKB_FRAGS_MAX)
		nr_frags = NTPROF_SKB_FRAGS_MAX;
	bpf_loop(nr_frags, ntprof_xmit_fragment, &walk, 0);
	return 0;
}

NTPROF_STAMPING_TRACEPOINT_HOOK(net_dev_queue, (struct sk_buff *skb), skb,
				on_net_dev_queue(skb, ntprof_typed))

#endif /* NTPROF_TCP_XMIT_H */
