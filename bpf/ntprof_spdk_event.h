/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_spdk_event.h - what bpf/spdk_usdt.bpf.c hands to the agent for each `ntprof` USDT probe
 * firing: the probe's arguments and stamp area as the application gave them (its clock, its rate),
 * plus the agent's clock at the probe. The agent (daemon/spdk/spdk_event_converter.cpp) turns one
 * into a struct ntprof_record; the conversion lives in user space so that it can be unit tested.
 */
#ifndef NTPROF_SPDK_EVENT_H
#define NTPROF_SPDK_EVENT_H

#include "ntprof_probe_abi.h"

#define NTPROF_SPDK_NQN_LEN 256

/* The attach cookie of each probe site: which probe fired. */
enum ntprof_spdk_probe_kind {
	NTPROF_SPDK_NVMF_TCP = 1,
	NTPROF_SPDK_NVMF_RDMA = 2,
	NTPROF_SPDK_NVME_TCP = 3,
	NTPROF_SPDK_NVME_RDMA = 4,
};
/* Or'ed into the cookie of sites in libntprof_probe.so: a user-space stack other than SPDK (a
 * Python initiator, ...) fired the probe, and reports must not name its driver "SPDK". */
#define NTPROF_SPDK_KIND_PROBE_LIBRARY 0x100u
#define NTPROF_SPDK_KIND_MASK 0xffu

enum ntprof_spdk_event_flags {
	NTPROF_SPDK_EV_REQ_UNREADABLE = 1u << 0, /* the stamp area could not be read */
	NTPROF_SPDK_EV_NQN_UNREADABLE = 1u << 1, /* the subsystem NQN could not be read */
};

struct ntprof_spdk_event {
	struct ntprof_probe_req req;  /* the v1 prefix of the application's stamp area */
	NTPROF_PROBE_U64 probe_mono_ns; /* bpf_ktime_get_ns() at the probe (CLOCK_MONOTONIC) */
	NTPROF_PROBE_U64 slba;
	NTPROF_PROBE_U32 pid;         /* process (thread group) id */
	NTPROF_PROBE_U32 kind;        /* enum ntprof_spdk_probe_kind | NTPROF_SPDK_KIND_PROBE_LIBRARY */
	NTPROF_PROBE_U32 nsid;
	NTPROF_PROBE_U32 nlb;
	NTPROF_PROBE_U32 bytes;
	NTPROF_PROBE_U32 flags;       /* enum ntprof_spdk_event_flags */
	NTPROF_PROBE_U16 cntlid;
	NTPROF_PROBE_U16 qid;
	NTPROF_PROBE_U16 cid;
	NTPROF_PROBE_U16 status;
	NTPROF_PROBE_U8 opcode;
	NTPROF_PROBE_U8 pad[7];
	char subnqn[NTPROF_SPDK_NQN_LEN];
};

#endif /* NTPROF_SPDK_EVENT_H */
