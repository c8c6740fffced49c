/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_maps.h - the layouts of the BPF maps that user space reads or writes, besides the record
 * itself (ntprof_record.h). Included by the BPF programs (after vmlinux.h) and by the agent in
 * daemon/, which static_asserts the sizes (daemon/record_layout.cpp).
 */
#ifndef NTPROF_MAPS_H
#define NTPROF_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "ntprof_record.h"

/* Why a command or a stamp was lost in the kernel; index of the per-CPU "losses" array. */
enum ntprof_loss_cause {
	NTPROF_LOSS_RINGBUF_FULL = 0,   /* record dropped: ring buffer full (user space too slow) */
	NTPROF_LOSS_INFLIGHT_FULL = 1,  /* sampled command not tracked: in-flight table full */
	NTPROF_LOSS_PDU_RESYNC = 2,     /* a socket send/receive did not start with a PDU header we
					 * know; the stream parser skipped it (stamps of that PDU lost) */
	NTPROF_LOSS_NO_QUEUE = 3,       /* PDU on an NVMe/TCP socket whose queue was not known yet */
	NTPROF_LOSS_COMPLETION_MISSED = 4, /* a sampled command's completion hook never ran: found
					 * when the block layer handed its request to a new command */
	NTPROF_LOSS_CAUSES = 5,
};

/* Host: (controller instance, qid, cid) -> struct request *, to find a command from its PDUs. */
struct ntprof_host_cid_key {
	__u32 ctrl;
	__u16 qid;
	__u16 cid;
};

/* Target: agent-local subsystem id -> subsystem NQN (filled once per subsystem by BPF). */
#define NTPROF_NQN_LEN 256
struct ntprof_subsys_name {
	char nqn[NTPROF_NQN_LEN];
};

/* Sizes of the bounded tables (user space sweeps commands that never complete). */
#define NTPROF_MAX_INFLIGHT 16384
#define NTPROF_MAX_SOCKETS 1024
#define NTPROF_MAX_DEVICES 256
#define NTPROF_MAX_SUBSYS 64

#endif /* NTPROF_MAPS_H */
