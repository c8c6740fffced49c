// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * placement_stamps.c - a real ELF for the placement check (`ntprofd probe --placement`): functions
 * named like SPDK v23.01.1's, each stamping through the installed contract header
 * (<ntprof/ntprof_probe.h>) exactly where deploy/spdk/v23.01.1/ntprof-probes.patch does, so the
 * USDT notes and symbols are the compiler's own. It is not SPDK: nothing here runs I/O.
 *
 * Built twice (tests/spdk/CMakeLists.txt): as is, every stamp and probe is in place (one helper
 * is inlined into its caller, as GCC does in SPDK); with PLACEMENT_BROKEN, the three faults a
 * fuzzy or repeated `patch` makes:
 *   misplaced  T5_REPLY_SENT of NVMe/RDMA in request_transfer_in, not request_transfer_out
 *              (what v24.09+ does to the v23.01.1 hunk, issue 37)
 *   missing    T3_BDEV_DONE of NVMe/TCP (nvmf_tcp_req_complete)
 *   doubled    T_R2T_SENT of NVMe/TCP twice in nvmf_tcp_send_r2t_pdu
 */
#include <stdint.h>
#include <stdlib.h>

#include "ntprof_probe.h"

#define FN __attribute__((noinline)) void

/* SPDK_VERSION_STRING as lib/nvmf/ctrlr.c compiles it in: the check reads the version from it. */
__attribute__((used)) const char spdk_version_string[] = "SPDK v23.01.1";

#define STAMP(r, slot) ntprof_probe_stamp((r), (slot), (r)->stamps[0] + (slot))
#define DONE(name, r) NTPROF_PROBE_##name((r), 1, "nqn.test", 1, 1, 0, 2, 1, 0, 7, 4096, 0)
/* both targets' state machines: T2 for the command and its fused partner, then T4 */
#define EXECUTE_AND_REPLY(r, fused)                                                                \
	do {                                                                                       \
		STAMP(r, NTPROF_PROBE_T2_BDEV_SUBMIT);                                             \
		STAMP(fused, NTPROF_PROBE_T2_BDEV_SUBMIT);                                         \
		STAMP(r, NTPROF_PROBE_T4_RESPONSE_QUEUED);                                         \
	} while (0)

/* ---- target, NVMe/TCP (lib/nvmf/tcp.c) ---- */

/* static and called once: GCC inlines it, as in SPDK; its T0 note then sits in the caller */
static inline __attribute__((always_inline)) void nvmf_tcp_ntprof_begin(struct ntprof_probe_req *r)
{
	STAMP(r, NTPROF_PROBE_T0_CAPSULE_RECEIVED);
}
FN nvmf_tcp_capsule_cmd_hdr_handle(struct ntprof_probe_req *r) { nvmf_tcp_ntprof_begin(r); }
FN nvmf_tcp_capsule_cmd_payload_handle(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_T_DATA_RECEIVED); }
FN nvmf_tcp_h2c_data_payload_handle(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_T_DATA_RECEIVED); }
FN nvmf_tcp_send_r2t_pdu(struct ntprof_probe_req *r)
{
	ntprof_probe_stamp_first(r, NTPROF_PROBE_T_R2T_SENT, 1);
#ifdef PLACEMENT_BROKEN
	ntprof_probe_stamp_first(r, NTPROF_PROBE_T_R2T_SENT, 2);
#endif
}
FN _nvmf_tcp_send_c2h_data(struct ntprof_probe_req *r) { ntprof_probe_stamp_first(r, NTPROF_PROBE_T5_REPLY_SENT, 3); }
FN nvmf_tcp_send_capsule_resp_pdu(struct ntprof_probe_req *r)
{
	if (r->stamps[NTPROF_PROBE_T5_REPLY_SENT])
		STAMP(r, NTPROF_PROBE_T_RESPONSE_SENT);
	else
		STAMP(r, NTPROF_PROBE_T5_REPLY_SENT);
}
FN nvmf_tcp_ntprof_done(struct ntprof_probe_req *r) { DONE(NVMF_TCP_DONE, r); }
FN nvmf_tcp_req_process(struct ntprof_probe_req *r, struct ntprof_probe_req *fused)
{
	STAMP(r, NTPROF_PROBE_T1_REQUEST_STARTED);
	EXECUTE_AND_REPLY(r, fused);
}
FN nvmf_tcp_req_complete(struct ntprof_probe_req *r)
{
#ifndef PLACEMENT_BROKEN
	STAMP(r, NTPROF_PROBE_T3_BDEV_DONE);
#else
	(void)r;
#endif
}

/* ---- target, NVMe/RDMA (lib/nvmf/rdma.c) ---- */

FN nvmf_rdma_ntprof_begin(struct ntprof_probe_req *r)
{
	STAMP(r, NTPROF_PROBE_T0_CAPSULE_RECEIVED);
	STAMP(r, NTPROF_PROBE_T1_REQUEST_STARTED);
}
FN nvmf_rdma_ntprof_done(struct ntprof_probe_req *r) { DONE(NVMF_RDMA_DONE, r); }
FN nvmf_rdma_request_process(struct ntprof_probe_req *r, struct ntprof_probe_req *fused)
{
	STAMP(r, NTPROF_PROBE_T_XFER_POSTED);
	EXECUTE_AND_REPLY(r, fused);
}
FN nvmf_rdma_request_complete(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_T3_BDEV_DONE); }
FN nvmf_rdma_poller_poll(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_T_XFER_DONE); }
FN request_transfer_in(struct ntprof_probe_req *r)
{
#ifdef PLACEMENT_BROKEN
	STAMP(r, NTPROF_PROBE_T5_REPLY_SENT);
#else
	(void)r;
#endif
}
FN request_transfer_out(struct ntprof_probe_req *r)
{
#ifndef PLACEMENT_BROKEN
	STAMP(r, NTPROF_PROBE_T5_REPLY_SENT);
#else
	r->stamps[1]++;
#endif
}

/* ---- host, NVMe/TCP (lib/nvme/nvme_tcp.c) ---- */

FN nvme_tcp_qpair_submit_request(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H1_SUBMIT); }
FN nvme_tcp_qpair_capsule_cmd_send(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H2_CAPSULE_SENT); }
FN nvme_tcp_capsule_resp_hdr_handle(struct ntprof_probe_req *r)
{
	ntprof_probe_stamp_first(r, NTPROF_PROBE_H3_REPLY_RECEIVED, 4);
	STAMP(r, NTPROF_PROBE_H_RESPONSE_RECEIVED);
}
FN nvme_tcp_c2h_data_hdr_handle(struct ntprof_probe_req *r) { ntprof_probe_stamp_first(r, NTPROF_PROBE_H3_REPLY_RECEIVED, 5); }
FN nvme_tcp_r2t_hdr_handle(struct ntprof_probe_req *r) { ntprof_probe_stamp_first(r, NTPROF_PROBE_H_R2T_RECEIVED, 6); }
FN nvme_tcp_send_h2c_data(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H_DATA_SENT); }
FN nvme_tcp_req_complete(struct ntprof_probe_req *r)
{
	STAMP(r, NTPROF_PROBE_H4_COMPLETED);
	DONE(NVME_TCP_DONE, r);
}

/* ---- host, NVMe/RDMA (lib/nvme/nvme_rdma.c) ---- */

FN nvme_rdma_qpair_submit_request(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H1_SUBMIT); }
FN nvme_rdma_qpair_submit_sends(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H2_CAPSULE_SENT); }
FN nvme_rdma_process_recv_completion(struct ntprof_probe_req *r) { STAMP(r, NTPROF_PROBE_H3_REPLY_RECEIVED); }
FN nvme_rdma_req_complete(struct ntprof_probe_req *r)
{
	STAMP(r, NTPROF_PROBE_H4_COMPLETED);
	DONE(NVME_RDMA_DONE, r);
}

int main(int argc, char **argv)
{
	/* never run by the test; the calls keep every function referenced */
	struct ntprof_probe_req r = {0}, fused = {0};
	r.sampled = argc > 1 ? (uint8_t)atoi(argv[1]) : 0;
	nvmf_tcp_capsule_cmd_hdr_handle(&r);
	nvmf_tcp_capsule_cmd_payload_handle(&r);
	nvmf_tcp_h2c_data_payload_handle(&r);
	nvmf_tcp_send_r2t_pdu(&r);
	_nvmf_tcp_send_c2h_data(&r);
	nvmf_tcp_send_capsule_resp_pdu(&r);
	nvmf_tcp_req_process(&r, &fused);
	nvmf_tcp_req_complete(&r);
	nvmf_tcp_ntprof_done(&r);
	nvmf_rdma_ntprof_begin(&r);
	nvmf_rdma_request_process(&r, &fused);
	nvmf_rdma_request_complete(&r);
	nvmf_rdma_poller_poll(&r);
	request_transfer_in(&r);
	request_transfer_out(&r);
	nvmf_rdma_ntprof_done(&r);
	nvme_tcp_qpair_submit_request(&r);
	nvme_tcp_qpair_capsule_cmd_send(&r);
	nvme_tcp_capsule_resp_hdr_handle(&r);
	nvme_tcp_c2h_data_hdr_handle(&r);
	nvme_tcp_r2t_hdr_handle(&r);
	nvme_tcp_send_h2c_data(&r);
	nvme_tcp_req_complete(&r);
	nvme_rdma_qpair_submit_request(&r);
	nvme_rdma_qpair_submit_sends(&r);
	nvme_rdma_process_recv_completion(&r);
	nvme_rdma_req_complete(&r);
	return (int)r.stamps[0];
}
