// SPDX-License-Identifier: GPL-2.0
/* Runs the shared sampler inside the kernel's BPF VM (BPF_PROG_TEST_RUN) so a test can prove the
 * BPF programs and user space take identical decisions. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ntprof_sampler.h"
#include "sampler_case.h"

SEC("syscall")
int sampler_check(struct sampler_case *c)
{
	c->hash = ntprof_command_hash(c->opcode, c->nsid, c->slba, c->nlb, c->cid, c->salt);
	/* as the kernel agent decides: its switch's threshold and the salt's key (ntprof_bpf_common.h) */
	c->sampled = ntprof_switch_sampled(c->n, c->threshold, c->opcode, c->nsid, c->slba, c->nlb,
					   c->cid, ntprof_salt_key(c->salt));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
