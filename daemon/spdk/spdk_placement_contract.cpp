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
  // v24.09+: a fuzzy hunk lands this one in request_transfer_in (issue 37; v25.09 below)
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

// deploy/spdk/v25.09/ntprof-probes.patch: the same functions hold the same stamps as in v23.01.1
// (every one still exists in v25.09's four files, with the same static callers), so its contract
// is v23.01.1's with what the port changed, read from v25.09's sources:
// - T5 of NVMe/RDMA: request_transfer_in now ends like request_transfer_out, and v23.01.1's hunk
//   lands in it with fuzz (issue 37). Both were inlined into nvmf_rdma_request_process, where the
//   two stamps could not be told apart; the patch keeps request_transfer_out out of line
//   (noinline), so T5 must be found there and nowhere else.
// - new static callers the compiler may inline a stamping function into: the host TCP's accel
//   sequence callbacks (nvme_tcp_req_complete), and on the host RDMA side
//   _nvme_rdma_qpair_submit_request (the SEND of both the plain and the accel-sequence path, whose
//   capsule goes out from nvme_rdma_memory_domain_transfer_data) and the accel completion.
// H1 of NVMe/RDMA stays in nvme_rdma_qpair_submit_request, moved before the accel-sequence branch.
PlacementContract PortedToV25_09(const PlacementContract& v23) {
  PlacementContract v25{"v25.09", v23.rules};
  for (PlacementRule& r : v25.rules) {
    if (r.file == "lib/nvmf/rdma.c" && r.slot == NTPROF_PROBE_T5_REPLY_SENT) {
      r.inline_hosts = {};
    } else if (r.file == "lib/nvme/nvme_tcp.c" && r.function == "nvme_tcp_req_complete") {
      r.inline_hosts.insert(r.inline_hosts.end(), {"pdu_seq_fail", "nvme_tcp_recv_payload_seq_cb"});
    } else if (r.file == "lib/nvme/nvme_rdma.c" && r.slot == NTPROF_PROBE_H2_CAPSULE_SENT) {
      r.inline_hosts.insert(r.inline_hosts.end(), {"_nvme_rdma_qpair_submit_request",
                                                   "nvme_rdma_memory_domain_transfer_data",
                                                   "nvme_rdma_qpair_process_submits"});
    } else if (r.file == "lib/nvme/nvme_rdma.c" && r.function == "nvme_rdma_req_complete") {
      r.inline_hosts.push_back("nvme_rdma_accel_completion_cb");
    }
  }
  return v25;
}
const PlacementContract kV25_09 = PortedToV25_09(kV23_01_1);

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
