/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_slots.h - in-flight tables as arrays of slots (layout and hash: ntprof_maps.h).
 *
 * A slot is claimed by swapping its key from 0 to the command's key (cmpxchg: two CPUs may aim at
 * one free slot), found by comparing keys over the NTPROF_SLOT_PROBES slots from the key's home,
 * and freed by swapping the key back to 0 (whoever swaps it owns the release, so a command's
 * emit and the agent's sweep cannot both count it). Every step is inlined array access: no kernel
 * call and no lock, which is what makes the rare sampled path cheap (docs/lab/overhead-log.md).
 *
 * Include after ntprof_bpf_common.h.
 */
#ifndef NTPROF_SLOTS_H
#define NTPROF_SLOTS_H

/* A table of sampled commands, which the agent sweeps through an mmap of it. */
#define NTPROF_SLOT_TABLE(name, slot_type)                                    \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_ARRAY);                             \
		__uint(map_flags, BPF_F_MMAPABLE); /* the agent's sweep */    \
		__uint(max_entries, NTPROF_SLOTS);                            \
		__type(key, __u32);                                           \
		__type(value, slot_type);                                     \
	} name SEC(".maps")

/* A table of slots only the programs use (nothing to sweep: entries stay valid or are checked). */
#define NTPROF_SLOT_ARRAY(name, slot_type)                                    \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_ARRAY);                             \
		__uint(max_entries, NTPROF_SLOTS);                            \
		__type(key, __u32);                                           \
		__type(value, slot_type);                                     \
	} name SEC(".maps")

/* Tries the NTPROF_SLOT_PROBES slots from key's home: with claim, takes the first free one for
 * key; without, finds the one holding key (its first field). The slot, or NULL. key may be a
 * BTF-typed pointer: it is taken as a number first (the verifier allows no arithmetic on one, and
 * the compiler may hash it in place). */
static __always_inline __u64 *ntprof_slot_probe(void *table, __u64 key, bool claim)
{
	__u32 home;

	key = ntprof_as_number((const void *)key);
	home = ntprof_slot_home((__u32)key);

#pragma unroll
	for (__u32 i = 0; i < NTPROF_SLOT_PROBES; i++) {
		__u32 idx = (home + i) & (NTPROF_SLOTS - 1);
		__u64 *slot = bpf_map_lookup_elem(table, &idx);

		if (!slot)
			continue;
		if (claim ? *slot == 0 && __sync_val_compare_and_swap(slot, 0, key) == 0
			  : *slot == key)
			return slot;
	}
	return NULL;
}

static __always_inline __u64 *ntprof_slot_find(void *table, __u64 key)
{
	return ntprof_slot_probe(table, key, false);
}

/* Claims a free slot of table for key: the slot, or NULL when all its probes are taken. */
static __always_inline __u64 *ntprof_slot_claim(void *table, __u64 key)
{
	return ntprof_slot_probe(table, key, true);
}

/* Claims a free slot of table for key or, when all its probes are taken, takes its home slot over
 * (the key written, *taken_over set): for tables whose entries are never freed, where a stale
 * entry must give way. NULL only if the array lookup fails. */
static __always_inline __u64 *ntprof_slot_claim_or_take(void *table, __u64 key, bool *taken_over)
{
	__u32 home;
	__u64 *slot;

	key = ntprof_as_number((const void *)key);
	slot = ntprof_slot_claim(table, key);
	*taken_over = false;
	if (slot)
		return slot;
	home = ntprof_slot_home((__u32)key);
	slot = bpf_map_lookup_elem(table, &home);
	if (!slot)
		return NULL;
	*slot = key;
	*taken_over = true;
	return slot;
}

/* Frees slot if it still holds key: true when this call freed it. */
static __always_inline bool ntprof_slot_release(__u64 *slot, __u64 key)
{
	return __sync_val_compare_and_swap(slot, key, 0) == key;
}

/* A slot whose fields change together is written with its check field (the one a reader compares
 * first) zeroed before and set last, between these: x86 keeps stores in order, and the barrier
 * keeps the compiler from reordering them. */
#define NTPROF_COMPILER_BARRIER() asm volatile("" ::: "memory")

/* ---- indexes: key -> a non-zero number, in arrays of struct ntprof_index_slot ----
 * For lookups that a hash map would make a kernel call (a kernel call's code and the map's
 * buckets are what a rarely run path pays for most under emulation: docs/lab/overhead-log.md).
 * Entries are never freed: an index whose key cannot get one of its probe slots takes its home
 * slot over, so an entry may be pushed out. Its users check what they find against the record
 * (a PDU's cid, a disk's diskseq): a lost or stale entry only costs a missed stamp or a reread. */
#define NTPROF_INDEX_TABLE(name) NTPROF_SLOT_ARRAY(name, struct ntprof_index_slot)

/* The number key maps to in index table, or 0. key may be a BTF-typed pointer (see
 * ntprof_slot_probe). */
static __always_inline __u64 ntprof_index_get(void *table, __u64 key)
{
	struct ntprof_index_slot *s = (struct ntprof_index_slot *)ntprof_slot_find(table, key);

	return s ? s->value : 0;
}

/* Maps key to value (non-zero) in index table: the key's slot, a free one, or its home slot. key
 * may be a BTF-typed pointer: it is taken as a number first, for the home slot's arithmetic. */
static __always_inline void ntprof_index_put(void *table, __u64 key, __u64 value)
{
	struct ntprof_index_slot *s = (struct ntprof_index_slot *)ntprof_slot_find(table, key);
	bool taken_over;

	if (!s)
		s = (struct ntprof_index_slot *)ntprof_slot_claim_or_take(table, key, &taken_over);
	if (s)
		s->value = value;
}

/* ---- tables of sampled commands' records, counted in ntprof_sampled_in_flight ---- */

/* The record of the sampled command keyed key, or NULL. While nothing sampled is in flight (most
 * of an unsampled command's hooks at 1 in 100) this is one array read. */
static __always_inline struct ntprof_record *ntprof_inflight_find(void *table, __u64 key)
{
	struct ntprof_record_slot *s;

	if (ntprof_nothing_sampled_in_flight())
		return NULL;
	s = (struct ntprof_record_slot *)ntprof_slot_find(table, key);
	return s ? &s->rec : NULL;
}

/* Starts tracking a sampled command keyed key with the record rec, replacing the record of an
 * entry the key already has. 0, or -1 when no slot was free (counted). The count rises before the
 * entry can be found, so a hook that finds the count 0 cannot miss an entry. */
static __always_inline long ntprof_inflight_put(void *table, __u64 key,
						 const struct ntprof_record *rec)
{
	struct ntprof_record_slot *s = (struct ntprof_record_slot *)ntprof_slot_find(table, key);

	if (!s) {
		ntprof_in_flight_add(1);
		s = (struct ntprof_record_slot *)ntprof_slot_claim(table, key);
		if (!s) {
			ntprof_in_flight_add(-1);
			ntprof_lose(NTPROF_LOSS_INFLIGHT_FULL);
			return -1;
		}
	}
	s->rec = *rec;
	return 0;
}

/* Stops tracking the command keyed key (counted by whichever call frees its slot). */
static __always_inline void ntprof_inflight_forget(void *table, __u64 key)
{
	__u64 *slot = ntprof_slot_find(table, key);

	if (slot && ntprof_slot_release(slot, key))
		ntprof_in_flight_add(-1);
}

#endif /* NTPROF_SLOTS_H */
