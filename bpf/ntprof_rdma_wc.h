/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_rdma_wc.h - RDMA work completions as the NVMe/RDMA programs (host_rdma.bpf.c,
 * target_rdma.bpf.c) see them: the ULPs' completion handlers are done(struct ib_cq *, struct
 * ib_wc *), called with the wc whose wr_cqe is a struct ib_cqe embedded in the ULP's own
 * per-request struct (container_of), and wc->qp->qp_context is the ULP's queue.
 *
 * Include after ntprof_bpf_common.h.
 */
#ifndef NTPROF_RDMA_WC_H
#define NTPROF_RDMA_WC_H

/* The address of the struct type whose ib_cqe member `member` the completion wc names. A number to
 * the verifier in every variant (container_of steps before the typed ib_cqe). */
#define NTPROF_WC_OWNER(typed, wc, type, member) \
	((void *)NTPROF_READ(typed, wc, wr_cqe) - bpf_core_field_offset(type, member))

/* The fentry and kprobe variants (<fn>_fentry, <fn>_kprobe) of a hook on the completion handler
 * fn, both calling handler(struct ib_wc___ntprof *wc, bool typed). */
#define NTPROF_WC_HOOK(fn, handler) \
	NTPROF_STAMPING_ENTRY_HOOK(fn, (void *cq, struct ib_wc___ntprof *wc), handler(wc, ntprof_typed))

#endif /* NTPROF_RDMA_WC_H */
