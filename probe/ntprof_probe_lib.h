/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_probe_lib.h - the ntprof probe contract as a shared library (libntprof_probe.so, C ABI),
 * for user-space NVMe-oF hosts and targets that cannot compile <ntprof/ntprof_probe.h> in: Python,
 * Go, Rust, Java. It is the same contract (the sampler, the stamp slots, the four `ntprof` USDT
 * probes, the control block the agent writes), behind functions instead of inline code; the probes
 * and the control block live in the library, so `ntprofd record --spdk-host PATH/libntprof_probe.so`
 * finds every process that loaded it. docs/userspace-initiators.md walks through an initiator.
 *
 *   ntprof_lib_init(clock_hz)                     once; 1e9 with ntprof_lib_now() (CLOCK_MONOTONIC ns)
 *   r = calloc(1, ntprof_lib_req_size())          one stamp area per command in flight
 *   if (ntprof_lib_begin(r, opc, nsid, slba, nlb, cid)) ...     sampled?
 *   ntprof_lib_stamp(r, NTPROF_PROBE_H2_CAPSULE_SENT, ntprof_lib_now())
 *   ntprof_lib_done(r, NTPROF_LIB_HOST_TCP, ntprof_lib_now(), subnqn, cntlid, qid, cid, opc, nsid,
 *                   slba, nlb, bytes, status)
 */
#ifndef NTPROF_PROBE_LIB_H
#define NTPROF_PROBE_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "ntprof_probe_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which USDT probe a command ends with: the role and the transport of the caller. */
enum ntprof_lib_probe {
	NTPROF_LIB_TARGET_TCP = 0,  /* ntprof:nvmf_tcp_done */
	NTPROF_LIB_TARGET_RDMA = 1, /* ntprof:nvmf_rdma_done */
	NTPROF_LIB_HOST_TCP = 2,    /* ntprof:nvme_tcp_done */
	NTPROF_LIB_HOST_RDMA = 3,   /* ntprof:nvme_rdma_done */
};

/* NTPROF_PROBE_VERSION the library implements (a binding checks it against its own). */
uint32_t ntprof_lib_version(void);
/* sizeof(struct ntprof_probe_req): what a binding allocates per command. */
size_t ntprof_lib_req_size(void);
/* Declares the rate of the clock the caller stamps with, in ticks per second. */
void ntprof_lib_init(uint64_t clock_hz);
/* N of "one command in N" the agent set; 0 while no agent is attached (or after it stopped). */
uint32_t ntprof_lib_sample_rate(void);
/* CLOCK_MONOTONIC in nanoseconds: a clock of 1e9 ticks per second for callers without their own. */
uint64_t ntprof_lib_now(void);
/* The sampling decision on the SQE's raw fields (slba = CDW11:CDW10, nlb = CDW12 & 0xffff), the
 * same as the kernel agents'. 1 when sampled; then stamps and the done probe record it. */
int ntprof_lib_begin(struct ntprof_probe_req *r, uint8_t opcode, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, uint16_t cid);
/* Records boundary `slot` (enum ntprof_probe_host_slot / _target_slot) if sampled. */
void ntprof_lib_stamp(struct ntprof_probe_req *r, unsigned slot, uint64_t ticks);
/* Like ntprof_lib_stamp, but keeps the first value. */
void ntprof_lib_stamp_first(struct ntprof_probe_req *r, unsigned slot, uint64_t ticks);
/* Fires the done probe of a sampled command and ends its sampling. -1 for an unknown `which`. */
int ntprof_lib_done(struct ntprof_probe_req *r, enum ntprof_lib_probe which, uint64_t now,
		    const char *subnqn, uint16_t cntlid, uint16_t qid, uint16_t cid, uint8_t opcode,
		    uint32_t nsid, uint64_t slba, uint32_t nlb, uint32_t bytes, uint16_t status);

#ifdef __cplusplus
}
#endif

#endif /* NTPROF_PROBE_LIB_H */
