// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty_hooks.bpf.c - programs that do nothing, one per attach point the agent's kernel objects
 * use, named as the agent's own (<hook>_tp, <fn>_fentry, <fn>_fexit, <tp>_rawtp).
 *
 * agent_overhead.py attaches the ones the agent attached on a VM (tests/bench/empty_hooks.cpp) to
 * measure the floor of recording in that VM: what the kernel and the machine charge for running
 * any program at those points (trampoline or tracepoint dispatch, bpf_stats' clock reads, and under
 * emulation the translated code around them). A hook of the agent cannot cost less than its empty
 * twin, so the agent's cost above the floor is what its code can still cut. A few are points the
 * agent no longer uses (the socket send calls, skb_copy_bits): attached with bpf_stats on, their
 * run_cnt says how often a candidate hook would run per I/O (docs/overhead.md, "The third cut",
 * "The fourth cut").
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY(kind, point, suffix)                 \
	SEC(#kind "/" #point)                      \
	int point##_##suffix(void *ctx)            \
	{                                          \
		return 0;                          \
	}

#define EMPTY_TRACEPOINT(event) EMPTY(tp_btf, event, tp) EMPTY(raw_tp, event, rawtp)
#define EMPTY_ENTRY(fn) EMPTY(fentry, fn, fentry)

/* nvme core and the block layer (hosts and targets) */
EMPTY_TRACEPOINT(nvme_setup_cmd)
EMPTY_TRACEPOINT(nvme_complete_rq)
EMPTY_TRACEPOINT(block_rq_issue)
EMPTY_TRACEPOINT(block_rq_complete)
EMPTY_TRACEPOINT(nvmet_req_init)
EMPTY_TRACEPOINT(nvmet_req_complete)
EMPTY_TRACEPOINT(block_bio_queue)
EMPTY_ENTRY(nvmet_req_init)
EMPTY_ENTRY(nvmet_req_complete)
EMPTY_ENTRY(nvmet_bdev_execute_rw)
EMPTY_ENTRY(nvmet_file_execute_rw)

/* NVMe/TCP: the socket calls and the drivers' own functions */
EMPTY_ENTRY(kernel_sendpage)
EMPTY_ENTRY(kernel_sendmsg)
EMPTY_ENTRY(sock_sendmsg)
EMPTY(fexit, skb_copy_bits, fexit)
EMPTY_TRACEPOINT(net_dev_queue)
EMPTY_ENTRY(nvme_tcp_recv_skb)

/* NVMe/RDMA */
EMPTY_ENTRY(nvme_rdma_post_send)
EMPTY_ENTRY(nvme_rdma_recv_done)
EMPTY_ENTRY(rdma_rw_ctx_post)
EMPTY_ENTRY(nvmet_rdma_read_data_done)
EMPTY_ENTRY(nvmet_rdma_send_done)
