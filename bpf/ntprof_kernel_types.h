/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_kernel_types.h - minimal CO-RE views of driver-private kernel structs.
 *
 * These structs live in module headers (drivers/nvme/host/nvme.h,
 * drivers/nvme/{host,target}/{tcp,rdma}.c, drivers/nvme/target/nvmet.h, include/rdma/ib_verbs.h),
 * so they are not in the build machine's vmlinux.h. Each is declared here with only the fields we
 * read and the CO-RE flavor suffix ___ntprof: libbpf strips the suffix and relocates every field
 * access against the BTF of the running kernel's module (nvme_core, nvme_tcp, nvme_rdma, nvmet,
 * nvmet_tcp, nvmet_rdma, ib_core) at load time, so offsets here do not matter, names do.
 *
 * Wire formats (the NVMe SQE, NVMe/TCP PDU headers) are not kernel structs: they are read as bytes at
 * the offsets the specifications fix (see the NTPROF_SQE_* and NTPROF_PDU_* constants).
 */
#ifndef NTPROF_KERNEL_TYPES_H
#define NTPROF_KERNEL_TYPES_H

#define NTPROF_CORE __attribute__((preserve_access_index))

/* ---- nvme_core (drivers/nvme/host/nvme.h) ---- */
struct nvme_ctrl___ntprof {
	int instance; /* N of /dev/nvmeN */
} NTPROF_CORE;

/* Lives right after struct request (blk_mq_rq_to_pdu): nvme_req(rq). */
struct nvme_request___ntprof {
	__u16 status;
	struct nvme_ctrl___ntprof *ctrl;
} NTPROF_CORE;

/* The multipath head of a namespace (CONFIG_NVME_MULTIPATH): its disk is nvmeXnY. */
struct nvme_ns_head___ntprof {
	struct gendisk *disk;
} NTPROF_CORE;

/* request->q->queuedata of an I/O request. */
struct nvme_ns___ntprof {
	struct gendisk *disk; /* the namespace's own disk: nvmeXnY, or the hidden path nvmeXcZnY */
	struct nvme_ns_head___ntprof *head;
} NTPROF_CORE;

/* ---- nvme_tcp host (drivers/nvme/host/tcp.c) ---- */
struct nvme_tcp_ctrl___ntprof;
struct nvme_tcp_queue___ntprof {
	struct socket *sock;
	/* receive state (nvme_tcp_recv_state() decides by these) */
	void *pdu;          /* receive buffer of the PDU header being read */
	int pdu_remaining;  /* header bytes still to come */
	int pdu_offset;     /* header bytes already in pdu */
	size_t data_remaining;  /* of a C2HData PDU's data */
	size_t ddgst_remaining; /* of its data digest */
	bool hdr_digest;
	bool data_digest;
	struct nvme_tcp_ctrl___ntprof *ctrl;
} NTPROF_CORE;

struct nvme_tcp_ctrl___ntprof {
	struct nvme_tcp_queue___ntprof *queues; /* qid = queue - queues */
	struct nvme_ctrl___ntprof ctrl;
} NTPROF_CORE;

/* ---- nvmet core (drivers/nvme/target/nvmet.h) ---- */
struct nvmet_subsys___ntprof;
struct nvmet_ctrl___ntprof {
	struct nvmet_subsys___ntprof *subsys;
	__u16 cntlid;
	char subsysnqn[256];
} NTPROF_CORE;

struct nvmet_sq___ntprof {
	struct nvmet_ctrl___ntprof *ctrl;
	__u16 qid;
} NTPROF_CORE;

struct nvmet_ns___ntprof {
	struct block_device *bdev;
} NTPROF_CORE;

struct nvmet_req___ntprof {
	void *cmd;                   /* struct nvme_command *: the SQE, read as bytes */
	struct nvme_completion *cqe; /* read as bytes too: status at NTPROF_CQE_STATUS */
	struct nvmet_sq___ntprof *sq;
	struct nvmet_ns___ntprof *ns;
} NTPROF_CORE;

/* ---- nvmet_tcp target (drivers/nvme/target/tcp.c) ---- */
/* One command slot of a queue: the reply PDU headers of its command are built in these buffers. */
struct nvmet_tcp_cmd___ntprof {
	struct nvmet_req___ntprof req; /* embedded: nvmet core names the command by &cmd->req */
	void *rsp_pdu;
	void *data_pdu; /* C2HData */
	void *r2t_pdu;
} NTPROF_CORE;

/* ---- ib_core (include/rdma/ib_verbs.h): work completions ---- */
struct ib_cqe___ntprof {
	void *done;
} NTPROF_CORE;

struct ib_qp___ntprof {
	void *qp_context; /* the ULP's queue (nvme_rdma_queue / nvmet_rdma_queue) */
} NTPROF_CORE;

enum ib_wc_status___ntprof { NTPROF_IB_WC_SUCCESS = 0 };

struct ib_wc___ntprof {
	struct ib_cqe___ntprof *wr_cqe; /* in an anonymous union with wr_id */
	enum ib_wc_status___ntprof status;
	struct ib_qp___ntprof *qp;
} NTPROF_CORE;

/* ---- nvme_rdma host (drivers/nvme/host/rdma.c) ---- */
struct nvme_rdma_qe___ntprof {
	struct ib_cqe___ntprof cqe; /* the completion names the qe by this member */
	void *data;                 /* the SQE (send) or CQE (receive) buffer */
} NTPROF_CORE;

/* The driver's per-request data, right after the struct request (blk_mq_rq_to_pdu). */
struct nvme_rdma_request___ntprof {
	struct nvme_rdma_qe___ntprof sqe; /* embedded: the command capsule's SQE buffer */
} NTPROF_CORE;

struct nvme_rdma_ctrl___ntprof;
struct nvme_rdma_queue___ntprof {
	struct nvme_rdma_ctrl___ntprof *ctrl;
} NTPROF_CORE;

struct nvme_rdma_ctrl___ntprof {
	struct nvme_rdma_queue___ntprof *queues; /* qid = queue - queues */
	struct nvme_ctrl___ntprof ctrl;
} NTPROF_CORE;

/* ---- nvmet_rdma target (drivers/nvme/target/rdma.c) ---- */
struct nvmet_rdma_cmd___ntprof {
	struct ib_cqe___ntprof cqe; /* receive completion of a capsule */
	void *nvme_cmd;             /* struct nvme_command *: the SQE, read as bytes */
} NTPROF_CORE;

struct nvmet_rdma_queue___ntprof {
	struct nvmet_sq___ntprof nvme_sq; /* embedded: &queue->nvme_sq is the command's sq */
} NTPROF_CORE;

struct nvmet_rdma_rsp___ntprof {
	struct ib_cqe___ntprof send_cqe; /* completion of the response SEND */
	struct ib_cqe___ntprof read_cqe; /* completion of the RDMA READ of a write's data */
	struct nvmet_req___ntprof req;   /* embedded: nvmet core names the command by &rsp->req */
	struct nvmet_rdma_cmd___ntprof *cmd; /* the receive buffer the capsule came in */
} NTPROF_CORE;

/* ---- NVMe submission queue entry (NVMe base spec, 64 bytes, little endian) ---- */
#define NTPROF_SQE_OPCODE 0
#define NTPROF_SQE_CID 2
#define NTPROF_SQE_NSID 4
#define NTPROF_SQE_SGL_LEN 32 /* dptr.sgl.length (fabrics: data length of the command) */
#define NTPROF_SQE_SGL_TYPE 39 /* dptr.sgl.type: descriptor type (bits 7:4) and sub type */
#define NTPROF_SGL_KEYED_DATA 0x4 /* keyed SGL data block (RDMA): length is 24 bits */
#define NTPROF_SGL_INCAPSULE 0x01  /* data block, sub type offset: the data is in the capsule */
#define NTPROF_SQE_SLBA 40
#define NTPROF_SQE_NLB 48     /* cdw12 bits 15:0, 0-based */
#define NTPROF_SQE_READ_LEN 52
#define NTPROF_CQE_CID 12     /* command_id of a completion queue entry */
#define NTPROF_CQE_STATUS 14  /* status field (bits 15:1) + phase (bit 0) */
#define NTPROF_OPC_FABRICS 0x7f

/* ---- NVMe/TCP PDU common header (NVMe/TCP transport spec) ---- */
enum ntprof_pdu_type {
	NTPROF_PDU_ICREQ = 0,
	NTPROF_PDU_ICRESP = 1,
	NTPROF_PDU_CMD = 4,
	NTPROF_PDU_RSP = 5,
	NTPROF_PDU_H2C_DATA = 6,
	NTPROF_PDU_C2H_DATA = 7,
	NTPROF_PDU_R2T = 9,
};
#define NTPROF_PDU_HDR_LEN 8     /* type, flags, hlen, pdo, plen (le32) */
#define NTPROF_PDU_CMD_HLEN 72   /* 8 + 64-byte SQE */
#define NTPROF_PDU_SMALL_HLEN 24 /* response, C2HData, H2CData, R2T */
#define NTPROF_PDU_DATA_CID 8    /* command_id in C2HData, H2CData and R2T headers */
#define NTPROF_PDU_RSP_CID 20    /* command_id of the CQE in a response capsule (8 + 12) */
#define NTPROF_PDU_C2H_DATA_LENGTH 16 /* data_length (le32) of a C2HData header (after cid, ttag, data_offset) */
#define NTPROF_PDU_DIGEST_LEN 4
#define NTPROF_PDU_F_DATA_SUCCESS 0x08 /* C2HData that also completes the command (no response) */

#endif /* NTPROF_KERNEL_TYPES_H */
