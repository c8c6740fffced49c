// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * local_block.bpf.c - a local block device with no fabric (loop, local NVMe, null_blk): the host
 * block layer and the drive, recorded with transport LOCAL.
 *
 *   H0  rq->start_time_ns (request allocated)
 *   H1  block_rq_issue     (handed to the driver; the sampling decision is taken here)
 *   H5  block_rq_complete
 *
 * There is no SQE: the sampled fields are the block request's, mapped onto the NVMe ones so the
 * shared sampler decides: opcode 0x02 read / 0x01 write, nsid 0, slba = start sector (512 B),
 * nlb = sectors - 1, cid 0. Other operations (flush, discard) are not sampled.
 *
 * Variants: _tp = tp_btf (BTF-typed tracepoint), _rawtp = raw tracepoint (no BTF needed).
 */
#include "ntprof_bpf_common.h"
#include "ntprof_host_block.h"

#define NVME_OPC_WRITE 0x01
#define NVME_OPC_READ 0x02

static __always_inline int on_block_rq_issue(struct request *rq, bool typed)
{
	__u32 dev = ntprof_rq_dev(rq, typed);
	__u32 op, sectors;
	__u64 sector;
	__u8 opcode;

	if (!ntprof_dev_watched(dev))
		return 0;
	op = ntprof_rq_op(rq, typed);
	if (op == NTPROF_REQ_OP_READ)
		opcode = NVME_OPC_READ;
	else if (op == NTPROF_REQ_OP_WRITE)
		opcode = NVME_OPC_WRITE;
	else
		return 0;
	sector = NTPROF_READ(typed, rq, __sector);
	sectors = NTPROF_READ(typed, rq, __data_len) >> 9;
	if (!sectors || !ntprof_is_sampled(opcode, 0, sector, sectors - 1, 0))
		return 0;
	struct ntprof_record init = {
		.slba = sector,
		.nlb = sectors - 1,
		.dev = dev,
		.opcode = opcode,
		.transport = NTPROF_TRANSPORT_LOCAL,
		.flags = op == NTPROF_REQ_OP_WRITE ? NTPROF_F_WRITE : 0,
	};
	init.stamps[NTPROF_H1_DRIVER_SUBMIT] = bpf_ktime_get_ns();
	host_track_request(rq, &init, true, typed); /* re-issue after a requeue: keep the first stamps */
	return 0;
}

static __always_inline int on_block_rq_complete(struct request *rq, int error)
{
	/* only sampled commands of watched devices are in flight: an unsampled one costs this lookup */
	struct ntprof_record *rec = host_block_done(rq);

	if (!rec)
		return 0;
	if (error)
		rec->flags |= NTPROF_F_ERROR;
	ntprof_emit(rec);
	host_forget_request(rq);
	return 0;
}

NTPROF_TRACEPOINT_HOOK(block_rq_issue, (struct request *rq), rq,
		       on_block_rq_issue(rq, ntprof_typed))

NTPROF_STAMPING_TRACEPOINT_HOOK(block_rq_complete, (struct request *rq, int error, unsigned int nr_bytes),
		       rq, on_block_rq_complete(rq, error))
