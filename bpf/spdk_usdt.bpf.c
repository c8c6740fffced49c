// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spdk_usdt.bpf.c - the agent's side of the ntprof probe contract (ntprof_probe.h): one program
 * attached, per process, to each `ntprof` USDT probe an SPDK target or host fires once per sampled
 * command. The application already decided "sampled" and took the stamps on its own clock; this
 * program only copies them out with the agent's clock at the probe, so that user space can place
 * them on CLOCK_MONOTONIC. The attach cookie says which probe (enum ntprof_spdk_probe_kind).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "ntprof_spdk_event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} spdk_events SEC(".maps");

/* Events dropped because user space did not drain the ring buffer in time. */
__u64 ringbuf_full = 0;

SEC("usdt")
int BPF_USDT(ntprof_spdk_done, void *req, void *subnqn, __u16 cntlid, __u16 qid, __u16 cid,
	     __u8 opcode, __u32 nsid, __u64 slba, __u32 nlb, __u32 bytes, __u16 status)
{
	__u64 now = bpf_ktime_get_ns();
	struct ntprof_spdk_event *e = bpf_ringbuf_reserve(&spdk_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&ringbuf_full, 1);
		return 0;
	}
	e->probe_mono_ns = now;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->kind = (__u32)bpf_usdt_cookie(ctx);
	e->flags = 0;
	/* The v1 prefix: a newer application's struct is longer, never different in this part. */
	if (bpf_probe_read_user(&e->req, sizeof(e->req), req)) {
		__builtin_memset(&e->req, 0, sizeof(e->req));
		e->flags |= NTPROF_SPDK_EV_REQ_UNREADABLE;
	}
	if (bpf_probe_read_user_str(e->subnqn, sizeof(e->subnqn), subnqn) < 0) {
		e->subnqn[0] = 0;
		e->flags |= NTPROF_SPDK_EV_NQN_UNREADABLE;
	}
	e->slba = slba;
	e->nsid = nsid;
	e->nlb = nlb;
	e->bytes = bytes;
	e->cntlid = cntlid;
	e->qid = qid;
	e->cid = cid;
	e->status = status;
	e->opcode = opcode;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
