/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_sampler.h - "the same one command in N, with no talking" (docs/design.md, "Sampling").
 *
 * One header-only implementation compiled into the BPF programs, the C++ agent and collector, and
 * user-space applications that follow the ntprof probe contract (SPDK). Host and target decide on
 * fields both see in the submission queue entry, so they keep the same commands without exchanging
 * anything but the session's (N, salt).
 */
#ifndef NTPROF_SAMPLER_H
#define NTPROF_SAMPLER_H

#if defined(__VMLINUX_H__) || defined(__KERNEL__)
#define NTPROF_SAMPLER_U8 __u8
#define NTPROF_SAMPLER_U16 __u16
#define NTPROF_SAMPLER_U32 __u32
#define NTPROF_SAMPLER_U64 __u64
#else
#include <stdint.h>
#define NTPROF_SAMPLER_U8 uint8_t
#define NTPROF_SAMPLER_U16 uint16_t
#define NTPROF_SAMPLER_U32 uint32_t
#define NTPROF_SAMPLER_U64 uint64_t
#endif

#ifndef NTPROF_SAMPLER_INLINE
#if defined(__bpf__)
#define NTPROF_SAMPLER_INLINE static __attribute__((always_inline)) inline
#else
#define NTPROF_SAMPLER_INLINE static inline
#endif
#endif

/* The splitmix64 / murmur3 64-bit finalizer: full avalanche at two multiplies. */
NTPROF_SAMPLER_INLINE NTPROF_SAMPLER_U64 ntprof_mix64(NTPROF_SAMPLER_U64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* The hash's first round, which depends on the salt alone: the same for every command of a
 * session, so the kernel agent computes it once, before load (rodata salt_key). */
NTPROF_SAMPLER_INLINE NTPROF_SAMPLER_U64 ntprof_salt_key(NTPROF_SAMPLER_U64 salt)
{
	return ntprof_mix64(salt ^ 0x6e7470726f66ULL /* "ntprof" */);
}

/*
 * The command hash from a salt key (ntprof_salt_key). A command's identity is what both sides see
 * in its SQE: the opcode, the namespace, the starting LBA's low 32 bits (CDW10) and the command
 * id. They are folded into one 64-bit word at bit positions of their own (the LBA in bits 0-31, the
 * namespace in 32-63, the opcode and command id in 40-63: they overlap the namespace's high bits
 * only past namespace 255), and that word gets one finalizer round: every output bit depends on
 * every input bit (full avalanche).
 * Why these fields alone: the kernel hooks load each SQE field through a BTF pointer, and each
 * such load is seven guest instructions (the JIT's guard of a faulting load), on every command of
 * both sides. The LBA's high dword (zero below 2 TiB of 512-byte blocks) and the block count
 * (the same for most of a stream) add no spread the LBA's low dword and the command id do not
 * give, and cost two loads and their folding, about 25 instructions per command
 * (docs/overhead.md, "The fifth cut"). nlb and slba's high dword stay in the signatures: the
 * probe contract passes the SQE's fields as they are.
 */
NTPROF_SAMPLER_INLINE NTPROF_SAMPLER_U64 ntprof_command_hash_keyed(NTPROF_SAMPLER_U8 opcode,
								    NTPROF_SAMPLER_U32 nsid,
								    NTPROF_SAMPLER_U64 slba,
								    NTPROF_SAMPLER_U32 nlb,
								    NTPROF_SAMPLER_U16 cid,
								    NTPROF_SAMPLER_U64 salt_key)
{
	NTPROF_SAMPLER_U64 word = ((NTPROF_SAMPLER_U64)nsid << 32) | (NTPROF_SAMPLER_U32)slba;

	(void)nlb;
	word ^= (((NTPROF_SAMPLER_U64)opcode << 16) | cid) << 40;
	return ntprof_mix64(salt_key ^ word);
}

/* The hash both sides compute; exposed so tests can check it bit for bit. */
NTPROF_SAMPLER_INLINE NTPROF_SAMPLER_U64 ntprof_command_hash(NTPROF_SAMPLER_U8 opcode,
							      NTPROF_SAMPLER_U32 nsid,
							      NTPROF_SAMPLER_U64 slba,
							      NTPROF_SAMPLER_U32 nlb,
							      NTPROF_SAMPLER_U16 cid,
							      NTPROF_SAMPLER_U64 salt)
{
	return ntprof_command_hash_keyed(opcode, nsid, slba, nlb, cid, ntprof_salt_key(salt));
}

/*
 * The largest hash sampled at one in N: hash <= 2^64/N - 1, i.e. the lowest 1/N of the hash space.
 * Thresholds, not residues, so that the sets nest: with one salt, a command sampled at 1 in 1000 is
 * also sampled at 1 in 10 (its hash is below both thresholds). Several sessions on one agent thus
 * sample at the finest rate asked and each keeps the subset its own rate picks (docs/design.md,
 * "Sampling"). N == 0 has no threshold (nothing is sampled; callers check it).
 */
NTPROF_SAMPLER_INLINE NTPROF_SAMPLER_U64 ntprof_sample_threshold(NTPROF_SAMPLER_U32 n)
{
	return n <= 1 ? ~(NTPROF_SAMPLER_U64)0 : ~(NTPROF_SAMPLER_U64)0 / n;
}

/* 1 when the hash is sampled at one in N. */
NTPROF_SAMPLER_INLINE int ntprof_hash_sampled(NTPROF_SAMPLER_U64 hash, NTPROF_SAMPLER_U32 n)
{
	NTPROF_SAMPLER_U64 threshold;

	if (n == 0)
		return 0;
	threshold = ntprof_sample_threshold(n);
#if defined(__bpf__)
	/* Keeps the division: clang folds hash <= MAX / n into an overflow check of hash * n, a
	 * 128-bit multiply (__multi3) BPF does not have. */
	asm volatile("" : "+r"(threshold));
#endif
	return hash <= threshold;
}

/* 1 when the command is one of the sampled ones at one in N. N == 0 samples nothing. */
NTPROF_SAMPLER_INLINE int ntprof_sampled(NTPROF_SAMPLER_U8 opcode, NTPROF_SAMPLER_U32 nsid,
					 NTPROF_SAMPLER_U64 slba, NTPROF_SAMPLER_U32 nlb,
					 NTPROF_SAMPLER_U16 cid, NTPROF_SAMPLER_U64 salt,
					 NTPROF_SAMPLER_U32 n)
{
	if (n == 0)
		return 0;
	if (n == 1)
		return 1;
	return ntprof_hash_sampled(ntprof_command_hash(opcode, nsid, slba, nlb, cid, salt), n);
}

/*
 * The decision in the form the kernel agent keeps it (its sampling switch): the rate with its
 * threshold worked out once, when the rate is set, so a command's decision is one compare and no
 * division. Takes exactly the decisions of ntprof_sampled() (tests/core/sampler_test.cpp).
 * threshold is 0 when rate is 0. The agent writes threshold before rate, so a hook reading the two
 * while a rate changes still takes a decision of the old rate or of the new one: rate 0 and 1 do not
 * look at the threshold, and any other rate with either threshold keeps a command one of the two
 * rates keeps.
 */
struct ntprof_sampling_switch {
	NTPROF_SAMPLER_U64 threshold;
	NTPROF_SAMPLER_U32 rate;
	NTPROF_SAMPLER_U32 pad;
};

NTPROF_SAMPLER_INLINE struct ntprof_sampling_switch ntprof_sampling_switch_for(NTPROF_SAMPLER_U32 n)
{
	struct ntprof_sampling_switch s;

	s.threshold = n == 0 ? 0 : ntprof_sample_threshold(n);
	s.rate = n;
	s.pad = 0;
	return s;
}

/* ntprof_sampled() with the switch's threshold and the salt's key. */
NTPROF_SAMPLER_INLINE int ntprof_switch_sampled(NTPROF_SAMPLER_U32 rate,
						NTPROF_SAMPLER_U64 threshold,
						NTPROF_SAMPLER_U8 opcode, NTPROF_SAMPLER_U32 nsid,
						NTPROF_SAMPLER_U64 slba, NTPROF_SAMPLER_U32 nlb,
						NTPROF_SAMPLER_U16 cid, NTPROF_SAMPLER_U64 salt_key)
{
	if (rate == 0)
		return 0;
	if (rate == 1)
		return 1;
	return ntprof_command_hash_keyed(opcode, nsid, slba, nlb, cid, salt_key) <= threshold;
}

#endif /* NTPROF_SAMPLER_H */
