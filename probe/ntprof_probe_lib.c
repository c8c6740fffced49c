/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libntprof_probe.so: ntprof_probe.h's inline contract behind exported functions. */
#include "ntprof_probe_lib.h"

#include <time.h>

#include "ntprof_probe.h"

#define NTPROF_LIB_EXPORT __attribute__((visibility("default")))

NTPROF_LIB_EXPORT uint32_t ntprof_lib_version(void)
{
	return NTPROF_PROBE_VERSION;
}

NTPROF_LIB_EXPORT size_t ntprof_lib_req_size(void)
{
	return sizeof(struct ntprof_probe_req);
}

NTPROF_LIB_EXPORT void ntprof_lib_init(uint64_t clock_hz)
{
	ntprof_probe_init(clock_hz);
}

NTPROF_LIB_EXPORT uint32_t ntprof_lib_sample_rate(void)
{
	/* volatile: the agent writes it from outside the program */
	return *(const volatile uint32_t *)&ntprof_probe_control.sample_rate;
}

NTPROF_LIB_EXPORT uint64_t ntprof_lib_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

NTPROF_LIB_EXPORT int ntprof_lib_begin(struct ntprof_probe_req *r, uint8_t opcode, uint32_t nsid,
				       uint64_t slba, uint32_t nlb, uint16_t cid)
{
	return ntprof_probe_begin(r, opcode, nsid, slba, nlb, cid);
}

NTPROF_LIB_EXPORT void ntprof_lib_stamp(struct ntprof_probe_req *r, unsigned slot, uint64_t ticks)
{
	ntprof_probe_stamp(r, slot, ticks);
}

NTPROF_LIB_EXPORT void ntprof_lib_stamp_first(struct ntprof_probe_req *r, unsigned slot,
					      uint64_t ticks)
{
	ntprof_probe_stamp_first(r, slot, ticks);
}

/* One USDT site per probe name: the probe's name is part of its ELF note, so it cannot be a
 * run-time argument. */
NTPROF_LIB_EXPORT int ntprof_lib_done(struct ntprof_probe_req *r, enum ntprof_lib_probe which,
				      uint64_t now, const char *subnqn, uint16_t cntlid,
				      uint16_t qid, uint16_t cid, uint8_t opcode, uint32_t nsid,
				      uint64_t slba, uint32_t nlb, uint32_t bytes, uint16_t status)
{
	switch (which) {
	case NTPROF_LIB_TARGET_TCP:
		NTPROF_PROBE_NVMF_TCP_DONE(r, now, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb,
					   bytes, status);
		return 0;
	case NTPROF_LIB_TARGET_RDMA:
		NTPROF_PROBE_NVMF_RDMA_DONE(r, now, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb,
					    bytes, status);
		return 0;
	case NTPROF_LIB_HOST_TCP:
		NTPROF_PROBE_NVME_TCP_DONE(r, now, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb,
					   bytes, status);
		return 0;
	case NTPROF_LIB_HOST_RDMA:
		NTPROF_PROBE_NVME_RDMA_DONE(r, now, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb,
					    bytes, status);
		return 0;
	}
	return -1;
}
