/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_record.h - the one definition of a per-command stage record.
 *
 * Included by the BPF programs (with vmlinux.h already included) and by user space (C++ adds
 * static_asserts on size and offsets in daemon/record_layout.cpp). A record is what one machine saw of
 * one sampled NVMe command: its identity and the stamps (docs/design.md, "Stage model") on that
 * machine's own monotonic clock (bpf_ktime_get_ns). A stamp of 0 means "not seen".
 */
#ifndef NTPROF_RECORD_H
#define NTPROF_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define NTPROF_MAX_STAMPS 16
#define NTPROF_DEVICE_NAME_LEN 32

enum ntprof_role {
	NTPROF_ROLE_UNKNOWN = 0,
	NTPROF_ROLE_HOST = 1,
	NTPROF_ROLE_TARGET = 2,
};

/* enum ntprof_transport: NTPROF_TRANSPORT_<X> for each TRANSPORT_<X> of record.proto's enum
 * Transport, generated from it by the build (cmake/TransportValues.cmake). */
#include "ntprof_transport_values.h"

/* Which software stack produced the record: names the drivers in reports. */
enum ntprof_stack {
	NTPROF_STACK_KERNEL = 0,
	NTPROF_STACK_SPDK = 1,
	NTPROF_STACK_USERSPACE = 2, /* any other user-space stack, through libntprof_probe.so */
};

/* Host stamps: index into ntprof_record.stamps when role == HOST. */
enum ntprof_host_stamp {
	NTPROF_H0_BLOCK_START = 0,   /* request started in the block layer */
	NTPROF_H1_DRIVER_SUBMIT = 1, /* nvme_setup_cmd */
	NTPROF_H2_CAPSULE_SENT = 2,  /* command capsule handed to the socket / RDMA SEND posted */
	NTPROF_H3_REPLY_RECEIVED = 3,/* first reply PDU header (TCP C2HData or response) / RDMA recv */
	NTPROF_H4_DRIVER_DONE = 4,   /* kernel: = H5 (nvme_complete_rq, the same call chain) */
	NTPROF_H5_BLOCK_DONE = 5,    /* block_rq_complete */
	NTPROF_H_RESPONSE_RECEIVED = 6, /* response capsule header (TCP reads: after the data PDUs) */
	NTPROF_H_R2T_RECEIVED = 7,   /* first R2T PDU header reached the host (TCP writes with R2T) */
	NTPROF_H_DATA_SENT = 8,      /* last H2CData byte handed to the socket (TCP writes with R2T) */
	NTPROF_HOST_STAMPS = 9,
};

/* Target stamps: index into ntprof_record.stamps when role == TARGET. */
enum ntprof_target_stamp {
	NTPROF_T0_CAPSULE_RECEIVED = 0, /* capsule header complete in the target driver */
	NTPROF_T1_REQ_INIT = 1,         /* nvmet_req_init / SPDK request created */
	NTPROF_T2_BACKEND_SUBMIT = 2,   /* handed to the backend (nvmet_bdev_execute_rw / bdev submit) */
	NTPROF_T3_BACKEND_DONE = 3,     /* backend completed (nvmet_req_complete / bdev completion) */
	NTPROF_T4_RESPOND = 4,          /* response queued by the target driver */
	NTPROF_T5_REPLY_SENT = 5,       /* first reply PDU handed to the socket / RDMA SEND completed */
	NTPROF_T_DRIVE_ISSUE = 6,       /* block_rq_issue on the backing device */
	NTPROF_T_DRIVE_DONE = 7,        /* = T3: the drive's completion ends at nvmet_req_complete */
	NTPROF_T_R2T_SENT = 8,          /* R2T PDU handed to the socket (TCP writes with R2T) */
	NTPROF_T_DATA_RECEIVED = 9,     /* all host data received (TCP H2CData / RDMA READ done) */
	NTPROF_T_XFER_POSTED = 10,      /* RDMA data transfer posted (WRITE for reads, READ for writes) */
	NTPROF_T_XFER_DONE = 11,        /* RDMA data transfer completed */
	NTPROF_T_RESPONSE_SENT = 12,    /* last reply PDU: TCP, its send call entered; RDMA, SEND done */
	NTPROF_TARGET_STAMPS = 13,
};

enum ntprof_record_flags {
	NTPROF_F_WRITE = 1u << 0,    /* data flows host -> target */
	NTPROF_F_R2T = 1u << 1,      /* NVMe/TCP write whose data went after an R2T */
	NTPROF_F_INCAPSULE = 1u << 2,/* write data carried in the command capsule */
	NTPROF_F_ERROR = 1u << 3,    /* completed with a non-zero NVMe status */
	NTPROF_F_EVICTED = 1u << 4,  /* never completed; pushed out of the in-flight table */
};

/*
 * Identity: (ctrl, qid, cid) plus (opcode, nsid, slba, nlb) as a check. "ctrl" is the host's controller
 * instance (nvmeN) on a host and the cntlid on a target (with "subsys" telling subsystems apart); the
 * agent resolves both to (subsystem NQN, cntlid) before a record leaves the machine.
 */
struct ntprof_record {
	__u64 stamps[NTPROF_MAX_STAMPS];
	__u64 slba;
	__u32 nsid;
	__u32 nlb;     /* number of logical blocks, 0-based as in the SQE */
	__u32 bytes;   /* data length of the command */
	__u32 ctrl;    /* host: controller instance N of nvmeN; target: cntlid */
	__u32 dev;     /* host: dev_t of the namespace block device; target: dev_t of the backing device */
	__u32 flags;   /* enum ntprof_record_flags */
	__u16 qid;
	__u16 cid;
	__u16 status;  /* NVMe status field of the completion */
	__u8 opcode;
	__u8 role;     /* enum ntprof_role */
	__u8 transport;/* enum ntprof_transport */
	__u8 stack;    /* enum ntprof_stack */
	__u16 pad;     /* 0 in BPF; on the wire, the index of the record's identity in its batch */
	__u32 subsys;  /* target: agent-local id of the nvmet subsystem (resolved to its NQN by the
			* agent); host: 0 (the agent resolves nvmeN through sysfs) */
};

#define NTPROF_RECORD_SIZE 176
/* This layout's number in RecordBatch.raw_layout (record.proto): a change to the struct is a new
 * number, so that a reader refuses records it would misread. */
#define NTPROF_RECORD_LAYOUT 1

#endif /* NTPROF_RECORD_H */
