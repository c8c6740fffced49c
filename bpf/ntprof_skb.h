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

/* skb_shinfo(skb). typed: see NTPROF_READ (an skb a program's arguments lead to). */
static __always_inline struct skb_shared_info *ntprof_skb_shinfo(const struct sk_buff *skb,
								 bool typed)
{
	return (void *)((__u64)NTPROF_READ(typed, skb, head) + NTPROF_READ(typed, skb, end));
}

/* An skb fragment's descriptor as both kernels lay it out: skb_frag_t is struct bio_vec on Linux
 * 6.1 (bv_page, bv_len, bv_offset) and struct skb_frag on later kernels (netmem: the struct page *
 * for page memory, len, offset); the agent's vmlinux.h has the latter, 6.1's BTF the former. */
struct frag_descriptor {
	__u64 page;
	__u32 len;
	__u32 offset;
};

/* Whether the running kernel's skb_frag_t is laid out as struct frag_descriptor: relocated
 * constants, so the verifier keeps one branch of a test on it. */
static __always_inline bool frag_descriptor_matches_kernel(void)
{
	if (bpf_core_field_exists(struct skb_frag, netmem))
		return bpf_core_type_size(struct skb_frag) == sizeof(struct frag_descriptor) &&
		       bpf_core_field_offset(struct skb_frag, netmem) ==
			       offsetof(struct frag_descriptor, page) &&
		       bpf_core_field_offset(struct skb_frag, len) ==
			       offsetof(struct frag_descriptor, len) &&
		       bpf_core_field_offset(struct skb_frag, offset) ==
			       offsetof(struct frag_descriptor, offset);
	return bpf_core_type_size(struct bio_vec) == sizeof(struct frag_descriptor) &&
	       bpf_core_field_offset(struct bio_vec, bv_page) ==
		       offsetof(struct frag_descriptor, page) &&
	       bpf_core_field_offset(struct bio_vec, bv_len) == offsetof(struct frag_descriptor, len) &&
	       bpf_core_field_offset(struct bio_vec, bv_offset) ==
		       offsetof(struct frag_descriptor, offset);
}

/* The kernel address of the first byte of the skb fragment whose descriptor is at frag, and its
 * length in *len: a probe read a field, for kernels whose descriptor is not laid out as struct
 * frag_descriptor. */
static __always_inline __u64 skb_frag_first_byte(__u64 frag, __u32 *len)
{
	__u64 page, offset;

	if (bpf_core_field_exists(struct skb_frag, netmem)) {
		const struct skb_frag *f = (const struct skb_frag *)frag;

		page = BPF_CORE_READ(f, netmem);
		offset = BPF_CORE_READ(f, offset);
		*len = BPF_CORE_READ(f, len);
	} else {
		const struct bio_vec *f = (const struct bio_vec *)frag;

		page = (__u64)BPF_CORE_READ(f, bv_page);
		offset = BPF_CORE_READ(f, bv_offset);
		*len = BPF_CORE_READ(f, bv_len);
	}
	return (__u64)ntprof_page_address(page) + offset;
}

/* The same in one probe read of the descriptor where its layout is the known one; 0 when it cannot
 * be read. Inline: for the bodies that the verifier checks apart from the loops that run them (the
 * global function below, net_dev_queue's bpf_loop callback). Inlined into a loop it is refused:
 * one read of the whole descriptor in net_dev_queue's loop stopped 6.12's verifier pruning it, a
 * call of the global function there stopped 6.1's ("BPF program is too large" both). */
static __always_inline __u64 skb_frag_first_byte_one_read(__u64 frag, __u32 *len)
{
	struct frag_descriptor d;

	if (!frag_descriptor_matches_kernel())
		return skb_frag_first_byte(frag, len);
	if (bpf_probe_read_kernel(&d, sizeof(d), (void *)frag))
		return 0;
	*len = d.len;
	return (__u64)ntprof_page_address(d.page) + d.offset;
}

/* The same as a global function: the verifier checks it once, apart from the walk that calls it. */
__noinline __u64 ntprof_skb_frag_first_byte(__u64 frag, __u32 *len)
{
	if (!len)
		return 0;
	return skb_frag_first_byte_one_read(frag, len);
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

/* A cursor at the start of skb's data. typed: see NTPROF_READ; the skb's own fields are then
 * direct loads, five probe reads fewer (the walks' global functions below start cursors on skbs
 * they know as numbers: untyped). */
static __always_inline void ntprof_skb_cursor_init(struct ntprof_skb_cursor *cur,
						   const struct sk_buff *s, bool typed)
{
	struct skb_shared_info *shinfo = ntprof_skb_shinfo(s, typed);

	cur->skb = ntprof_as_number(s);
	cur->frags = (__u64)shinfo + bpf_core_field_offset(struct skb_shared_info, frags);
	cur->piece = (__u64)NTPROF_READ(typed, s, data);
	cur->start = 0;
	cur->len = NTPROF_READ(typed, s, len) - NTPROF_READ(typed, s, data_len);
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
	if (at < cur->start) {
		/* the head as a local first: inside BPF_CORE_READ cur->skb would be relocated as a
		 * kernel type's field */
		const struct sk_buff *head = (const struct sk_buff *)cur->skb;

		ntprof_skb_cursor_init(cur, head, false);
	}
	for (__u32 i = 0; i < NTPROF_SKB_FRAGS_MAX && at - cur->start >= cur->len; i++) {
		__u32 len;
		__u64 first_byte;

		if (cur->next_frag >= cur->nr_frags)
			return 0;
		first_byte = ntprof_skb_frag_first_byte(
			cur->frags + cur->next_frag * bpf_core_type_size(skb_frag_t), &len);
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
	next = (__u64)BPF_CORE_READ(ntprof_skb_shinfo(head, false), frag_list);
	for (__u32 i = 0; i < NTPROF_SKB_FRAG_LIST_MAX && next; i++) {
		ntprof_skb_cursor_init(&part, (const struct sk_buff *)next, false);
		address = ntprof_skb_cursor_seek(&part, at, avail);
		if (address)
			return address;
		at -= part.start + part.len;
		next = (__u64)BPF_CORE_READ((const struct sk_buff *)next, next);
	}
	return 0;
}

#endif /* NTPROF_SKB_H */
