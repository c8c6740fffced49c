// SPDX-License-Identifier: GPL-2.0
/* Runs the agents' in-flight slot table (bpf/ntprof_slots.h) inside the kernel's BPF VM
 * (BPF_PROG_TEST_RUN), on a table user space reads through the same mmap the agent's sweep uses,
 * so a test can prove both sides find, claim and free the same slots. */
#include "ntprof_bpf_common.h"
#include "ntprof_slots.h"
#include "slot_case.h"

NTPROF_SLOT_TABLE(inflight, struct ntprof_record_slot);

SEC("syscall")
int slots_check(struct slot_case *c)
{
	struct ntprof_record rec = { .slba = c->marker };
	struct ntprof_record *found;

	switch (c->op) {
	case SLOT_PUT:
		c->result = ntprof_inflight_put(&inflight, c->key, &rec);
		break;
	case SLOT_FIND:
		found = ntprof_inflight_find(&inflight, c->key);
		c->result = found != NULL;
		c->marker = found ? found->slba : 0;
		break;
	case SLOT_FORGET:
		ntprof_inflight_forget(&inflight, c->key);
		break;
	}
	return 0;
}
