/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_probe.h - the ntprof probe contract for user-space NVMe-oF targets and hosts (SPDK).
 *
 * Installed as <ntprof/ntprof_probe.h>. An application that includes it and calls the functions
 * below is profiled by `ntprofd record --spdk-target|--spdk-host` with the same stages, sampling and
 * join as the Linux drivers. docs/spdk.md says where each call goes in SPDK.
 *
 *   once, at start:      ntprof_probe_init(clock_hz)           e.g. spdk_get_ticks_hz()
 *   first sight of a     ntprof_probe_begin(&req->ntprof, opcode, nsid, slba, nlb, cid)
 *   command:             (decides "sampled", the same way as the kernel agents)
 *   at each boundary:    ntprof_probe_stamp(&req->ntprof, NTPROF_PROBE_T2_BDEV_SUBMIT, now)
 *   when it is done:     NTPROF_PROBE_NVMF_TCP_DONE(&req->ntprof, now, subnqn, cntlid, qid, cid,
 *                                                   opcode, nsid, slba, nlb, bytes, status)
 *
 * Cost with sampling off (the agent not attached, or the session over): one load and one branch in
 * ntprof_probe_begin; stamps and the probe are skipped. A sampled command pays the stamps and one
 * USDT probe (a nop until the agent attaches).
 */
#ifndef NTPROF_PROBE_H
#define NTPROF_PROBE_H

#include <string.h>
#include <sys/sdt.h>

#include "ntprof_probe_abi.h"
#include "ntprof_sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NTPROF_PROBE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define NTPROF_PROBE_UNLIKELY(x) (x)
#endif

/*
 * The one control block of the process, found by the agent through the ELF symbol table. A weak
 * definition here lets every translation unit include this header without a "define it in exactly
 * one file" rule; a process that maps several objects built with it (libspdk_nvmf.so and
 * libspdk_nvme.so) may hold one copy per object: the agent writes every copy it finds.
 * For stripped shared objects keep the symbol exported (SPDK: add it to the library's .map file).
 */
__attribute__((weak, used, visibility("default"))) struct ntprof_probe_control ntprof_probe_control = {
	NTPROF_PROBE_MAGIC, NTPROF_PROBE_VERSION, (NTPROF_PROBE_U16)sizeof(struct ntprof_probe_control),
	0, 0, 0, 0,
};

/* Declares the rate of the clock the application stamps with (ticks per second). */
static inline void ntprof_probe_init(uint64_t clock_hz)
{
	ntprof_probe_control.clock_hz = clock_hz;
}

/*
 * Called once per command, where its SQE is first known (target: capsule received; host: request
 * built). Pass the raw SQE fields for every opcode: slba = CDW11:CDW10, nlb = CDW12 & 0xffff.
 * Returns 1 when the command is sampled.
 */
static inline int ntprof_probe_begin(struct ntprof_probe_req *r, uint8_t opcode, uint32_t nsid,
				     uint64_t slba, uint32_t nlb, uint16_t cid)
{
	/* volatile: the agent changes these from outside the program at any time */
	const volatile struct ntprof_probe_control *c = &ntprof_probe_control;
	uint32_t n = c->sample_rate;

	r->sampled = 0;
	if (NTPROF_PROBE_UNLIKELY(n != 0) && ntprof_sampled(opcode, nsid, slba, nlb, cid, c->salt, n)) {
		memset(r, 0, sizeof(*r));
		r->version = NTPROF_PROBE_VERSION;
		r->size = (uint16_t)sizeof(*r);
		r->clock_hz = c->clock_hz;
		r->sampled = 1;
	}
	return r->sampled;
}

/*
 * Every stamp site also leaves a USDT note `ntprof_stamp:stamp` with the slot as its argument (a nop
 * on the sampled path only, never attached): `ntprofd probe --placement` reads the notes to name
 * the function each stamp landed in, which is how a patch hunk applied in the wrong function is
 * caught. always_inline: the note must sit at the call site, and the slot must be a constant there
 * (pass slots as constants, not as expressions chosen at run time).
 */
#if defined(__GNUC__)
#define NTPROF_PROBE_STAMP_INLINE static inline __attribute__((always_inline))
#else
#define NTPROF_PROBE_STAMP_INLINE static inline
#endif

/* Records boundary `slot` at `ticks` (the application's clock) if the command is sampled. */
NTPROF_PROBE_STAMP_INLINE void ntprof_probe_stamp(struct ntprof_probe_req *r, unsigned slot,
						  uint64_t ticks)
{
	if (NTPROF_PROBE_UNLIKELY(r->sampled) && slot < NTPROF_PROBE_STAMPS) {
		STAP_PROBE1(ntprof_stamp, stamp, slot);
		r->stamps[slot] = ticks;
	}
}

/* Like ntprof_probe_stamp, but keeps the first value (e.g. "first reply PDU" of several). */
NTPROF_PROBE_STAMP_INLINE void ntprof_probe_stamp_first(struct ntprof_probe_req *r, unsigned slot,
							uint64_t ticks)
{
	if (NTPROF_PROBE_UNLIKELY(r->sampled) && slot < NTPROF_PROBE_STAMPS) {
		STAP_PROBE1(ntprof_stamp, stamp, slot);
		if (r->stamps[slot] == 0)
			r->stamps[slot] = ticks;
	}
}

/*
 * Fires probe `name` for a sampled command and ends its sampling. `now` (the application's clock)
 * is evaluated only for sampled commands. Arguments: see ntprof_probe_abi.h.
 */
#define NTPROF_PROBE_DONE(name, r, now, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb, bytes,   \
			  status)                                                                    \
	do {                                                                                         \
		struct ntprof_probe_req *ntprof_r_ = (r);                                            \
		if (NTPROF_PROBE_UNLIKELY(ntprof_r_->sampled)) {                                     \
			ntprof_r_->done_ticks = (now);                                               \
			STAP_PROBE11(ntprof, name, ntprof_r_, (const char *)(subnqn),                \
				     (uint16_t)(cntlid), (uint16_t)(qid), (uint16_t)(cid),           \
				     (uint8_t)(opcode), (uint32_t)(nsid), (uint64_t)(slba),          \
				     (uint32_t)(nlb), (uint32_t)(bytes), (uint16_t)(status));        \
			ntprof_r_->sampled = 0;                                                      \
		}                                                                                    \
	} while (0)

#define NTPROF_PROBE_NVMF_TCP_DONE(...) NTPROF_PROBE_DONE(nvmf_tcp_done, __VA_ARGS__)
#define NTPROF_PROBE_NVMF_RDMA_DONE(...) NTPROF_PROBE_DONE(nvmf_rdma_done, __VA_ARGS__)
#define NTPROF_PROBE_NVME_TCP_DONE(...) NTPROF_PROBE_DONE(nvme_tcp_done, __VA_ARGS__)
#define NTPROF_PROBE_NVME_RDMA_DONE(...) NTPROF_PROBE_DONE(nvme_rdma_done, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* NTPROF_PROBE_H */
