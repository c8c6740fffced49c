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

/* Byte *at of skb's own data (linear part, then page fragments): its kernel address, and in
 * *avail how many bytes of the same piece begin there. 0 when skb's own data ends before it; *at
 * is then what is left to skip in the skbs after it. */
static __always_inline __u64 skb_own_byte_address(const struct sk_buff *skb, __u32 *at,
						  __u32 *avail)
{
	__u32 headlen = BPF_CORE_READ(skb, len) - BPF_CORE_READ(skb, data_len);
	struct skb_shared_info *shinfo;
	const void *frags;
	__u32 nr_frags;

	if (*at < headlen) {
		*avail = headlen - *at;
		return (__u64)BPF_CORE_READ(skb, data) + *at;
	}
	*at -= headlen;
	shinfo = ntprof_skb_shinfo(skb);
	frags = (void *)shinfo + bpf_core_field_offset(struct skb_shared_info, frags);
	nr_frags = BPF_CORE_READ(shinfo, nr_frags);
	for (__u32 i = 0; i < NTPROF_SKB_FRAGS_MAX && i < nr_frags; i++) {
		__u32 len;
		__u64 first_byte = skb_frag_first_byte(frags + i * bpf_core_type_size(skb_frag_t), &len);

		if (*at < len) {
			*avail = len - *at;
			return first_byte + *at;
		}
		*at -= len;
	}
	return 0;
}

/* Byte `at` of the data of skb (a struct sk_buff *, as a number), counted as skb_copy_bits()
 * counts it (the head's own bytes, then each skb of its frag list): its kernel address and, in
 * *avail, how many bytes of the same piece begin there; 0 beyond what is searched. A global
 * function, so the verifier checks its loops once, not at every call (6.12's verifier gave up on
 * the inlined walks of a header's bytes: "BPF program is too large"). */
__noinline __u64 ntprof_skb_byte_address(__u64 skb, __u32 at, __u32 *avail)
{
	const struct sk_buff *head = (const struct sk_buff *)skb;
	const struct sk_buff *part;
	__u64 address;

	if (!avail)
		return 0;
	address = skb_own_byte_address(head, &at, avail);
	if (address)
		return address;
	part = BPF_CORE_READ(ntprof_skb_shinfo(head), frag_list);
	for (__u32 i = 0; i < NTPROF_SKB_FRAG_LIST_MAX && part; i++) {
		address = skb_own_byte_address(part, &at, avail);
		if (address)
			return address;
		part = BPF_CORE_READ(part, next);
	}
	return 0;
}

/* A cursor over the pieces of one skb's data (linear part, then page fragments) for offsets that
 * only grow, as a walk of the PDU headers in it does: each piece's descriptor is read once per
 * walk, where looking every header up from the start read the fragments before it again. */
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

/* Byte `at` of the cursor's skb, at or after the last byte sought: its kernel address and in
 * *avail how many bytes of its piece begin there; 0 if none. Beyond the fragments (a frag list)
 * it searches from the start. A global function: the verifier checks its loop once. */
__noinline __u64 ntprof_skb_cursor_seek(struct ntprof_skb_cursor *cur, __u32 at, __u32 *avail)
{
	if (!cur || !avail)
		return 0;
	if (at < cur->start)
		return ntprof_skb_byte_address(cur->skb, at, avail);
	for (__u32 i = 0; i < NTPROF_SKB_FRAGS_MAX && at - cur->start >= cur->len; i++) {
		__u32 len;
		__u64 first_byte;

		if (cur->next_frag >= cur->nr_frags)
			return ntprof_skb_byte_address(cur->skb, at, avail);
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

#endif /* NTPROF_SKB_H */
