/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_probe_abi.h - the binary layout of the ntprof probe contract: what a user-space NVMe-oF
 * target or host (SPDK) keeps in its memory and hands to the `ntprof` USDT probes, and what the
 * agent (ntprofd) reads and writes there. docs/spdk.md explains the contract; ntprof_probe.h is the
 * API an application includes.
 *
 * This file has no functions so that the BPF program (bpf/spdk_usdt.bpf.c) can include it too.
 *
 * Versioning - a newer agent must read an older application:
 *   - NTPROF_PROBE_VERSION counts compatible revisions. A revision may only APPEND fields to the
 *     structs below and APPEND probe arguments; it never moves, resizes or renumbers anything.
 *   - Every struct carries the version and size the application was built with, so the agent reads
 *     exactly the prefix it knows.
 *   - An incompatible change gets a new NTPROF_PROBE_MAGIC (the agent then refuses the process with
 *     a message naming both).
 */
#ifndef NTPROF_PROBE_ABI_H
#define NTPROF_PROBE_ABI_H

#if defined(__VMLINUX_H__) || defined(__KERNEL__)
#define NTPROF_PROBE_U8 __u8
#define NTPROF_PROBE_U16 __u16
#define NTPROF_PROBE_U32 __u32
#define NTPROF_PROBE_U64 __u64
#else
#include <stdint.h>
#define NTPROF_PROBE_U8 uint8_t
#define NTPROF_PROBE_U16 uint16_t
#define NTPROF_PROBE_U32 uint32_t
#define NTPROF_PROBE_U64 uint64_t
#endif

#define NTPROF_PROBE_MAGIC 0x6e747072u /* "ntpr" */
#define NTPROF_PROBE_VERSION 1

/* The USDT provider and the probe names (one per role and transport). */
#define NTPROF_PROBE_PROVIDER "ntprof"
#define NTPROF_PROBE_NAME_NVMF_TCP "nvmf_tcp_done"    /* target, NVMe/TCP */
#define NTPROF_PROBE_NAME_NVMF_RDMA "nvmf_rdma_done" /* target, NVMe/RDMA */
#define NTPROF_PROBE_NAME_NVME_TCP "nvme_tcp_done"    /* host, NVMe/TCP */
#define NTPROF_PROBE_NAME_NVME_RDMA "nvme_rdma_done" /* host, NVMe/RDMA */

/* Stamp-site notes (ntprof_probe.h): never attached, read by the placement check. */
#define NTPROF_PROBE_STAMP_PROVIDER "ntprof_stamp"
#define NTPROF_PROBE_STAMP_NAME "stamp"

/* The symbol of the one struct ntprof_probe_control in the process (see below). */
#define NTPROF_PROBE_CONTROL_SYMBOL "ntprof_probe_control"

/*
 * Process-wide control, one per process: the application initializes magic/version/size/clock_hz,
 * the agent writes salt, then sample_rate (through /proc/PID/mem) when a session starts, and
 * sample_rate = 0 when it ends. sample_rate 0 means "sample nothing": the only cost left in the
 * application is one load and one branch per command.
 */
struct ntprof_probe_control {
	NTPROF_PROBE_U32 magic;       /* NTPROF_PROBE_MAGIC */
	NTPROF_PROBE_U16 version;     /* NTPROF_PROBE_VERSION the application was built with */
	NTPROF_PROBE_U16 size;        /* sizeof(struct ntprof_probe_control) in the application */
	NTPROF_PROBE_U32 sample_rate; /* N: one command in N (written by the agent; 0 = off) */
	NTPROF_PROBE_U32 reserved;
	NTPROF_PROBE_U64 salt;        /* the session's sampling salt (written by the agent) */
	NTPROF_PROBE_U64 clock_hz;    /* ticks per second of the application's stamp clock */
};

#define NTPROF_PROBE_STAMPS 16

/*
 * Stamp slots. The numbers are those of enum ntprof_host_stamp / ntprof_target_stamp in
 * ntprof_record.h (the agent checks this at compile time); a slot is never renumbered.
 * User-space hosts have no block layer: slots 0 (H0) and 5 (H5) stay 0.
 */
enum ntprof_probe_host_slot {
	NTPROF_PROBE_H1_SUBMIT = 1,            /* request entered the host driver */
	NTPROF_PROBE_H2_CAPSULE_SENT = 2,      /* command capsule handed to the socket / SEND posted */
	NTPROF_PROBE_H3_REPLY_RECEIVED = 3,    /* first reply (C2HData or response) reached the driver */
	NTPROF_PROBE_H4_COMPLETED = 4,         /* completion handed to the application's callback */
	NTPROF_PROBE_H_RESPONSE_RECEIVED = 6,  /* response capsule (after data PDUs of a TCP read) */
	NTPROF_PROBE_H_R2T_RECEIVED = 7,       /* first R2T of a TCP write */
	NTPROF_PROBE_H_DATA_SENT = 8,          /* last H2CData of a TCP write handed to the socket */
};

enum ntprof_probe_target_slot {
	NTPROF_PROBE_T0_CAPSULE_RECEIVED = 0,  /* command capsule received by the transport */
	NTPROF_PROBE_T1_REQUEST_STARTED = 1,   /* transport request object started (state NEW) */
	NTPROF_PROBE_T2_BDEV_SUBMIT = 2,       /* handed to the NVMe-oF core / bdev (request exec) */
	NTPROF_PROBE_T3_BDEV_DONE = 3,         /* bdev completed (transport's req_complete) */
	NTPROF_PROBE_T4_RESPONSE_QUEUED = 4,   /* transport starts the reply (READY_TO_COMPLETE) */
	NTPROF_PROBE_T5_REPLY_SENT = 5,        /* first reply PDU handed to the socket / SEND posted */
	NTPROF_PROBE_T_R2T_SENT = 8,           /* R2T handed to the socket (TCP writes) */
	NTPROF_PROBE_T_DATA_RECEIVED = 9,      /* all write data received (H2CData / RDMA READ done) */
	NTPROF_PROBE_T_XFER_POSTED = 10,       /* RDMA READ of write data posted */
	NTPROF_PROBE_T_XFER_DONE = 11,         /* RDMA READ of write data completed */
	NTPROF_PROBE_T_RESPONSE_SENT = 12,     /* response capsule handed (TCP reads: after the data) */
};

/*
 * Per-request stamp area, embedded in the application's request object. Filled only for sampled
 * commands; the probe hands its address to the agent (probe argument 1).
 */
struct ntprof_probe_req {
	NTPROF_PROBE_U16 version;     /* NTPROF_PROBE_VERSION (set when the command is sampled) */
	NTPROF_PROBE_U16 size;        /* sizeof(struct ntprof_probe_req) in the application */
	NTPROF_PROBE_U8 sampled;      /* 1 between "begin" and the done probe */
	NTPROF_PROBE_U8 reserved[3];
	NTPROF_PROBE_U64 clock_hz;    /* copy of ntprof_probe_control.clock_hz */
	NTPROF_PROBE_U64 done_ticks;  /* the application's clock when the done probe fired: the agent
				       * pairs it with its own clock to place the stamps in time */
	NTPROF_PROBE_U64 stamps[NTPROF_PROBE_STAMPS]; /* application clock ticks; 0 = not taken */
};

/*
 * Probe arguments (version 1; later versions only append):
 *   1 const struct ntprof_probe_req *  stamps and clock
 *   2 const char *subnqn               subsystem NQN, NUL-terminated (the join key)
 *   3 uint16 cntlid                    controller id (the join key)
 *   4 uint16 qid                       queue id (0 = admin)
 *   5 uint16 cid                       command id as in the SQE
 *   6 uint8  opcode
 *   7 uint32 nsid
 *   8 uint64 slba                      SQE CDW10/11, raw for every opcode
 *   9 uint32 nlb                       SQE CDW12 bits 0-15 (0-based), raw for every opcode
 *  10 uint32 bytes                     data length of the command
 *  11 uint16 status                    NVMe status field of the completion (SCT/SC), 0 = success
 */
#define NTPROF_PROBE_ARGS_V1 11

#endif /* NTPROF_PROBE_ABI_H */
