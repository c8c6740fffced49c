/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_skb.h - where an skb's bytes are: its linear part, its page fragments and the skbs of its
 * frag list, read through CO-RE on any kernel. Both NVMe/TCP sides read PDU headers out of skbs
 * themselves (ntprof_tcp_xmit.h for the ones leaving, host_tcp.bpf.c for the ones arriving),
 * because the drivers' own helpers that touch them are inlined.
 */
#ifndef NTPROF_SKB_H
#define NTPROF_SKB_H

/* More than any kernel's CONFIG_MAX_SKB_FRAGS (17 by default, 45 at most). */
#define NTPROF_SKB_FRAGS_MAX 45
/* The skbs of a frag list searched after the head's own bytes (GRO chains segments there when
 * the head's fragments are full). */
#define NTPROF_SKB_FRAG_LIST_MAX 4

/* The clock, read once for all the PDUs of one skb: they leave, or are read, together. */
static __always_inline __u64 ntprof_now_once(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

static __always_inline struct skb_shared_info *ntprof_skb_shinfo(const struct sk_buff *skb)
{
	return (void *)(BPF_CORE_READ(skb, head) + BPF_CORE_READ(skb, end));
}

/* The kernel address of an skb fragment's first byte, and its length. skb_frag_t is struct
 * bio_vec on Linux 6.1 and struct skb_frag (a netmem reference, the struct page * for page memory)
 * on later kernels; the agent's vmlinux.h has the latter, 6.1's BTF the former. (One read of the
 * whole descriptor instead of three made the host's net_dev_queue program too large for 6.12's
 * verifier: its fragment loop no longer pruned.) */
static __always_inline __u64 skb_frag_first_byte(const void *frag, __u32 *len)
{
	__u64 page, offset;

	if (bpf_core_field_exists(struct skb_frag, netmem)) {
		const struct skb_frag *f = frag;

		page = BPF_CORE_READ(f, netmem);
		offset = BPF_CORE_READ(f, offset);
		*len = BPF_CORE_READ(f, len);
	} else {
		const struct bio_vec *f = frag;

		page = (__u64)BPF_CORE_READ(f, bv_page);
		offset = BPF_CORE_READ(f, bv_offset);
		*len = BPF_CORE_READ(f, bv_len);
	}
	return (__u64)ntprof_page_address(page) + offset;
}

/* A cursor over the pieces of one skb's own data (linear part, then page fragments) for offsets
 * that only grow, as a walk of the PDU headers in it does: each piece's descriptor is read once
 * per walk, where looking every header up from the start read the fragments before it again. */
struct ntprof_skb_cursor {
	__u64 skb;        /* struct sk_buff *, as a number */
	__u64 frags;      /* address of skb_shinfo(skb)->frags[0] */
	__u64 piece;      /* kernel address of the current piece's first byte */
	__u32 start;      /* skb offset of that byte */
	__u32 len;        /* the current piece's length */
	__u32 next_frag;  /* the fragment after the current piece */
	__u32 nr_frags;
};

/* A cursor at the start of skb's data (skb as a number). */
static __always_inline void ntprof_skb_cursor_init(struct ntprof_skb_cursor *cur, __u64 skb)
{
	const struct sk_buff *s = (const struct sk_buff *)skb;
	struct skb_shared_info *shinfo = ntprof_skb_shinfo(s);

	cur->skb = skb;
	cur->frags = (__u64)shinfo + bpf_core_field_offset(struct skb_shared_info, frags);
	cur->piece = (__u64)BPF_CORE_READ(s, data);
	cur->start = 0;
	cur->len = BPF_CORE_READ(s, len) - BPF_CORE_READ(s, data_len);
	cur->next_frag = 0;
	cur->nr_frags = BPF_CORE_READ(shinfo, nr_frags);
}

/* Byte `at` of the cursor's skb's own data: its kernel address and in *avail how many bytes of its
 * piece begin there. 0 beyond the skb's own data, the cursor then on its last piece (start + len
 * is the own data's length). A byte before the current piece starts the walk again. A global
 * function: the verifier checks its loop once, not at every call (6.12's verifier gave up on
 * inlined walks of a header's bytes: "BPF program is too large"). */
__noinline __u64 ntprof_skb_cursor_seek(struct ntprof_skb_cursor *cur, __u32 at, __u32 *avail)
{
	if (!cur || !avail)
		return 0;
	if (at < cur->start)
		ntprof_skb_cursor_init(cur, cur->skb);
	for (__u32 i = 0; i < NTPROF_SKB_FRAGS_MAX && at - cur->start >= cur->len; i++) {
		__u32 len;
		__u64 first_byte;

		if (cur->next_frag >= cur->nr_frags)
			return 0;
		first_byte = skb_frag_first_byte(
			(void *)(cur->frags + cur->next_frag * bpf_core_type_size(skb_frag_t)), &len);
		cur->start += cur->len;
		cur->piece = first_byte;
		cur->len = len;
		cur->next_frag++;
	}
	if (at - cur->start >= cur->len)
		return 0;
	*avail = cur->start + cur->len - at;
	return cur->piece + (at - cur->start);
}

/* Byte `at` of the cursor's skb, counted as skb_copy_bits() counts it (its own data, then each skb
 * of its frag list): its kernel address and in *avail how many bytes of its piece begin there; 0
 * beyond what is searched. */
__noinline __u64 ntprof_skb_byte_address(struct ntprof_skb_cursor *cur, __u32 at, __u32 *avail)
{
	struct ntprof_skb_cursor part;
	const struct sk_buff *head;
	__u64 address, next;

	if (!cur || !avail)
		return 0;
	address = ntprof_skb_cursor_seek(cur, at, avail);
	if (address)
		return address;
	at -= cur->start + cur->len;
	/* the head as a local first: inside BPF_CORE_READ cur->skb would be relocated as a kernel
	 * type's field */
	head = (const struct sk_buff *)cur->skb;
	next = (__u64)BPF_CORE_READ(ntprof_skb_shinfo(head), frag_list);
	for (__u32 i = 0; i < NTPROF_SKB_FRAG_LIST_MAX && next; i++) {
		ntprof_skb_cursor_init(&part, next);
		address = ntprof_skb_cursor_seek(&part, at, avail);
		if (address)
			return address;
		at -= part.start + part.len;
		next = (__u64)BPF_CORE_READ((const struct sk_buff *)next, next);
	}
	return 0;
}

#endif /* NTPROF_SKB_H */
