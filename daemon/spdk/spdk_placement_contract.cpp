#include "spdk_placement_contract.h"

#include "absl/strings/str_join.h"
#include "ntprof_probe_abi.h"

namespace ntprof::agent::spdk {
namespace {

constexpr int kDone = PlacementRule::kDoneProbe;
constexpr SpdkRole kTarget = SpdkRole::kTarget;
constexpr SpdkRole kHost = SpdkRole::kHost;

// H4 and the done probe share the host's req_complete, which its callers may absorb in turn.
const std::vector<absl::string_view> kNvmeTcpReqCompleteHosts = {
    "nvme_tcp_req_complete_safe", "nvme_tcp_qpair_cmd_send_complete",
    "nvme_tcp_c2h_data_payload_handle", "_nvme_tcp_pdu_payload_handle", "tcp_data_recv_crc32_done",
    "nvme_tcp_capsule_resp_hdr_handle", "nvme_tcp_pdu_psh_handle",
    "nvme_tcp_qpair_h2c_data_send_complete", "nvme_tcp_qpair_abort_reqs",
    "nvme_tcp_admin_qpair_abort_aers"};
const std::vector<absl::string_view> kNvmeRdmaReqCompleteHosts = {
    "nvme_rdma_request_ready", "nvme_rdma_process_recv_completion",
    "nvme_rdma_process_send_completion", "nvme_rdma_cq_process_completions",
    "nvme_rdma_qpair_abort_reqs", "nvme_rdma_qpair_disconnected", "nvme_rdma_admin_qpair_abort_aers"};

// deploy/spdk/v23.01.1/ntprof-probes.patch, function by function (docs/spdk.md, section 2).
// inline_hosts: the static callers of `function` in v23.01.1, and theirs (up to three levels, while
// each is static and its address is not taken), read from the patched sources: GCC inlines a
// static function called once at -O2 whatever its size. Without debug information the notes
// only say which function holds a stamp, not which one it was written in, so a host accepts it. nvmf_tcp_req_process, nvmf_rdma_request_process and the
// transports' req_complete are called from many places or through pointers: never inlined.
const PlacementContract kV23_01_1{"v23.01.1", {
  // target, NVMe/TCP: lib/nvmf/tcp.c
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T0_CAPSULE_RECEIVED", NTPROF_PROBE_T0_CAPSULE_RECEIVED,
   "nvmf_tcp_ntprof_begin", 1, {"nvmf_tcp_capsule_cmd_hdr_handle", "nvmf_tcp_sock_process"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T1_REQUEST_STARTED", NTPROF_PROBE_T1_REQUEST_STARTED,
   "nvmf_tcp_req_process"},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T_DATA_RECEIVED", NTPROF_PROBE_T_DATA_RECEIVED,
   "nvmf_tcp_capsule_cmd_payload_handle", 1,
   {"_nvmf_tcp_pdu_payload_handle", "nvmf_tcp_pdu_payload_handle", "data_crc32_calc_done",
    "nvmf_tcp_sock_process"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T_DATA_RECEIVED", NTPROF_PROBE_T_DATA_RECEIVED,
   "nvmf_tcp_h2c_data_payload_handle", 1,
   {"_nvmf_tcp_pdu_payload_handle", "nvmf_tcp_pdu_payload_handle", "data_crc32_calc_done",
    "nvmf_tcp_sock_process"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T_R2T_SENT", NTPROF_PROBE_T_R2T_SENT,
   "nvmf_tcp_send_r2t_pdu", 1, {"nvmf_tcp_req_process"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T2_BDEV_SUBMIT", NTPROF_PROBE_T2_BDEV_SUBMIT,
   "nvmf_tcp_req_process", 2},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T3_BDEV_DONE", NTPROF_PROBE_T3_BDEV_DONE,
   "nvmf_tcp_req_complete"},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T4_RESPONSE_QUEUED", NTPROF_PROBE_T4_RESPONSE_QUEUED,
   "nvmf_tcp_req_process"},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T5_REPLY_SENT", NTPROF_PROBE_T5_REPLY_SENT,
   "_nvmf_tcp_send_c2h_data", 1,
   {"nvmf_tcp_send_c2h_data", "nvmf_tcp_pdu_c2h_data_complete", "request_transfer_out"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T5_REPLY_SENT", NTPROF_PROBE_T5_REPLY_SENT,
   "nvmf_tcp_send_capsule_resp_pdu", 1,
   {"request_transfer_out", "nvmf_tcp_pdu_c2h_data_complete", "_nvmf_tcp_send_c2h_data",
    "nvmf_tcp_send_c2h_data"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", "T_RESPONSE_SENT", NTPROF_PROBE_T_RESPONSE_SENT,
   "nvmf_tcp_send_capsule_resp_pdu", 1,
   {"request_transfer_out", "nvmf_tcp_pdu_c2h_data_complete", "_nvmf_tcp_send_c2h_data",
    "nvmf_tcp_send_c2h_data"}},
  {kTarget, "tcp", "lib/nvmf/tcp.c", NTPROF_PROBE_NAME_NVMF_TCP, kDone,
   "nvmf_tcp_ntprof_done", 1, {"nvmf_tcp_req_process"}},

  // target, NVMe/RDMA: lib/nvmf/rdma.c
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T0_CAPSULE_RECEIVED", NTPROF_PROBE_T0_CAPSULE_RECEIVED,
   "nvmf_rdma_ntprof_begin", 1, {"nvmf_rdma_request_process"}},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T1_REQUEST_STARTED", NTPROF_PROBE_T1_REQUEST_STARTED,
   "nvmf_rdma_ntprof_begin", 1, {"nvmf_rdma_request_process"}},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T_XFER_POSTED", NTPROF_PROBE_T_XFER_POSTED,
   "nvmf_rdma_request_process"},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T_XFER_DONE", NTPROF_PROBE_T_XFER_DONE,
   "nvmf_rdma_poller_poll", 1, {"nvmf_rdma_poll_group_poll"}},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T2_BDEV_SUBMIT", NTPROF_PROBE_T2_BDEV_SUBMIT,
   "nvmf_rdma_request_process", 2},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T3_BDEV_DONE", NTPROF_PROBE_T3_BDEV_DONE,
   "nvmf_rdma_request_complete"},
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T4_RESPONSE_QUEUED", NTPROF_PROBE_T4_RESPONSE_QUEUED,
   "nvmf_rdma_request_process"},
  // v24.09+: a fuzzy hunk lands this one in request_transfer_in (issue 37)
  {kTarget, "rdma", "lib/nvmf/rdma.c", "T5_REPLY_SENT", NTPROF_PROBE_T5_REPLY_SENT,
   "request_transfer_out", 1, {"nvmf_rdma_request_process"}},
  {kTarget, "rdma", "lib/nvmf/rdma.c", NTPROF_PROBE_NAME_NVMF_RDMA, kDone,
   "nvmf_rdma_ntprof_done", 1, {"nvmf_rdma_request_process"}},

  // host, NVMe/TCP: lib/nvme/nvme_tcp.c
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H1_SUBMIT", NTPROF_PROBE_H1_SUBMIT,
   "nvme_tcp_qpair_submit_request"},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H2_CAPSULE_SENT", NTPROF_PROBE_H2_CAPSULE_SENT,
   "nvme_tcp_qpair_capsule_cmd_send", 1, {"nvme_tcp_qpair_submit_request"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H3_REPLY_RECEIVED", NTPROF_PROBE_H3_REPLY_RECEIVED,
   "nvme_tcp_capsule_resp_hdr_handle", 1, {"nvme_tcp_pdu_psh_handle", "nvme_tcp_read_pdu", "nvme_tcp_qpair_process_completions"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H3_REPLY_RECEIVED", NTPROF_PROBE_H3_REPLY_RECEIVED,
   "nvme_tcp_c2h_data_hdr_handle", 1, {"nvme_tcp_pdu_psh_handle", "nvme_tcp_read_pdu", "nvme_tcp_qpair_process_completions"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H_RESPONSE_RECEIVED", NTPROF_PROBE_H_RESPONSE_RECEIVED,
   "nvme_tcp_capsule_resp_hdr_handle", 1, {"nvme_tcp_pdu_psh_handle", "nvme_tcp_read_pdu", "nvme_tcp_qpair_process_completions"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H_R2T_RECEIVED", NTPROF_PROBE_H_R2T_RECEIVED,
   "nvme_tcp_r2t_hdr_handle", 1, {"nvme_tcp_pdu_psh_handle", "nvme_tcp_read_pdu", "nvme_tcp_qpair_process_completions"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H_DATA_SENT", NTPROF_PROBE_H_DATA_SENT,
   "nvme_tcp_send_h2c_data", 1,
   {"nvme_tcp_r2t_hdr_handle", "nvme_tcp_qpair_cmd_send_complete",
    "nvme_tcp_qpair_h2c_data_send_complete", "nvme_tcp_pdu_psh_handle", "nvme_tcp_read_pdu",
    "nvme_tcp_qpair_process_completions"}},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", "H4_COMPLETED", NTPROF_PROBE_H4_COMPLETED,
   "nvme_tcp_req_complete", 1,
   kNvmeTcpReqCompleteHosts},
  {kHost, "tcp", "lib/nvme/nvme_tcp.c", NTPROF_PROBE_NAME_NVME_TCP, kDone,
   "nvme_tcp_req_complete", 1,
   kNvmeTcpReqCompleteHosts},

  // host, NVMe/RDMA: lib/nvme/nvme_rdma.c
  {kHost, "rdma", "lib/nvme/nvme_rdma.c", "H1_SUBMIT", NTPROF_PROBE_H1_SUBMIT,
   "nvme_rdma_qpair_submit_request"},
  {kHost, "rdma", "lib/nvme/nvme_rdma.c", "H2_CAPSULE_SENT", NTPROF_PROBE_H2_CAPSULE_SENT,
   "nvme_rdma_qpair_submit_sends", 1,
   {"nvme_rdma_qpair_submit_request", "nvme_rdma_qpair_process_completions",
    "nvme_rdma_poll_group_process_completions"}},
  {kHost, "rdma", "lib/nvme/nvme_rdma.c", "H3_REPLY_RECEIVED", NTPROF_PROBE_H3_REPLY_RECEIVED,
   "nvme_rdma_process_recv_completion", 1,
   {"nvme_rdma_cq_process_completions", "nvme_rdma_qpair_process_completions",
    "nvme_rdma_poll_group_process_completions"}},
  {kHost, "rdma", "lib/nvme/nvme_rdma.c", "H4_COMPLETED", NTPROF_PROBE_H4_COMPLETED,
   "nvme_rdma_req_complete", 1,
   kNvmeRdmaReqCompleteHosts},
  {kHost, "rdma", "lib/nvme/nvme_rdma.c", NTPROF_PROBE_NAME_NVME_RDMA, kDone,
   "nvme_rdma_req_complete", 1,
   kNvmeRdmaReqCompleteHosts},
}};

// v25.09: the rules arrive with deploy/spdk/v25.09/ntprof-probes.patch (issue 37, item 1), read
// from that patch as above (the inline hosts from v25.09's own callers). Every function named for
// v23.01.1 still exists in v25.09's four files; what the port must watch: T5 of NVMe/RDMA stays in
// request_transfer_out (request_transfer_in now ends alike: the trap this check exists for), RDMA
// READs are posted in parts (request_transfer_in may run several times per request), and the host
// RDMA accel-sequence path sends the capsule from a callback (H2 may need a second site).
const PlacementContract kV25_09{"v25.09", {}};

const PlacementContract* const kContracts[] = {&kV23_01_1, &kV25_09};

}  // namespace

const PlacementContract* FindPlacementContract(absl::string_view version) {
  if (!version.empty() && version.front() != 'v') {
    for (const PlacementContract* c : kContracts) {
      if (c->version.substr(1) == version) return c;
    }
  }
  for (const PlacementContract* c : kContracts) {
    if (c->version == version) return c;
  }
  return nullptr;
}

std::string KnownPlacementVersions() {
  std::vector<absl::string_view> v;
  for (const PlacementContract* c : kContracts) {
    if (!c->rules.empty()) v.push_back(c->version);
  }
  return absl::StrJoin(v, ", ");
}

}  // namespace ntprof::agent::spdk
