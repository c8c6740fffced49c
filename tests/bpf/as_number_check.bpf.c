// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * as_number_check.bpf.c - ntprof_as_number (bpf/ntprof_bpf_common.h) on a real trusted pointer:
 * the request of every block_rq_issue, in a tp_btf program. The number must be the pointer's
 * bits (a probe read of the pointer itself, the way it used to be taken) and an address: the
 * request's sector read through it must be the one loaded through the typed pointer.
 */
#include "ntprof_bpf_common.h"

__u64 runs = 0;
__u64 wrong_bits = 0;     /* the number is not the pointer */
__u64 wrong_address = 0;  /* reading through the number gives another sector */

SEC("tp_btf/block_rq_issue")
int BPF_PROG(check_request_number, struct request *rq)
{
	__u64 number = ntprof_as_number(rq), bits = 0, sector = 0;

	bpf_probe_read_kernel(&bits, sizeof(bits), &rq);
	bpf_probe_read_kernel(&sector, sizeof(sector),
			      (void *)(number + bpf_core_field_offset(struct request, __sector)));
	__sync_fetch_and_add(&runs, 1);
	if (number != bits)
		__sync_fetch_and_add(&wrong_bits, 1);
	if (sector != rq->__sector)
		__sync_fetch_and_add(&wrong_address, 1);
	return 0;
}
