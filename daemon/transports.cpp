#include "transports.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "block_devices.h"
#include "host_rdma.skel.h"
#include "host_tcp.skel.h"
#include "local_block.skel.h"
#include "ntprof_record.h"
#include "nvme_sysfs.h"
#include "target_rdma.skel.h"
#include "target_tcp.skel.h"

namespace ntprof::agent {

// The BPF programs write the transport into each record and the agent copies it into the v1 record
// as it is. The BPF enum is generated from the proto's (cmake/TransportValues.cmake); these check
// the generator, a new transport needs no line here.
static_assert(int{NTPROF_TRANSPORT_UNKNOWN} == v1::TRANSPORT_UNKNOWN);
static_assert(int{NTPROF_TRANSPORT_TCP} == v1::TRANSPORT_TCP);
static_assert(int{NTPROF_TRANSPORT_RDMA} == v1::TRANSPORT_RDMA);
static_assert(int{NTPROF_TRANSPORT_LOCAL} == v1::TRANSPORT_LOCAL);

namespace {

// The namespaces of an NVMe-oF host on `transport` (all, or only `device`) from sysfs.
WatchedDevices HostNamespaces(const NvmeHostView& view, v1::Transport transport,
                              const std::string& device) {
  WatchedDevices w;
  w.devices = view.DevicesOn(TransportName(transport), device);
  w.present = device.empty() || !w.devices.empty();
  return w;
}

// Host: the NVMe-oF namespaces on kTransport; target: nothing to name (every nvmet command). No
// ports either: the programs know an NVMe/TCP queue's socket by the PDU buffers of the sampled
// commands sent on it (bpf/ntprof_tcp_xmit.h).
template <v1::Transport kTransport>
WatchedDevices WatchNvmeOf(Role role, const std::string& device, const NvmeHostView& host_view) {
  if (role != Role::kHost) return {};
  return HostNamespaces(host_view, kTransport, device);
}

// ---- NVMe/TCP ----------------------------------------------------------------------------------

constexpr const char* kNvmeTcpHint =
    "run modprobe nvme-tcp and connect a controller (nvme connect -t tcp ...)";
constexpr const char* kNvmetTcpHint =
    "run modprobe nvmet-tcp and configure a TCP port in /sys/kernel/config/nvmet";
// Where both sides see a sampled command's PDUs leave: the skbs queued to the network device,
// among whose page fragments the PDU buffers of the sampled commands are found
// (bpf/ntprof_tcp_xmit.h). One tracepoint run per skb, the same on every kernel, where a trampoline
// on the socket send calls ran once per PDU and the send call changed in Linux 6.5. `stamps` is
// what the role's PDUs provide.
HookSpec TcpTransmitHook(const std::string& stamps, const char* types_module, const char* hint) {
  return TracepointHook("net", "net_dev_queue", "", types_module, stamps, true, hint);
}

std::vector<HookSpec> HostTcpHooks() {
  std::vector<HookSpec> hooks = {SetupCmdHook(kNvmeTcpHint)};
  hooks.push_back(TcpTransmitHook("H2, H_DATA_SENT", "nvme_tcp", kNvmeTcpHint));
  // the reply PDU headers, read out of each skb the driver is about to read (bpf/host_tcp.bpf.c)
  hooks.push_back(FunctionHook("nvme_tcp_recv_skb", "nvme_tcp", "nvme_tcp",
                               "H3, H_RESPONSE_RECEIVED, H_R2T_RECEIVED", true, false,
                               kNvmeTcpHint));
  hooks.push_back(HostCompletionHook());
  return hooks;
}

std::vector<HookSpec> TargetTcpHooks() {
  std::vector<HookSpec> hooks;
  // NVMe/TCP decides on the SQE nvmet_tcp copied out of the capsule (bpf/target_tcp.bpf.c)
  for (HookSpec& h : NvmetCoreHooks(kNvmetTcpHint)) hooks.push_back(std::move(h));
  hooks.push_back(TcpTransmitHook("T5, T_R2T_SENT, T_RESPONSE_SENT; emits the record",
                                  "nvmet_tcp", kNvmetTcpHint));
  return hooks;
}

// ---- NVMe/RDMA ---------------------------------------------------------------------------------

constexpr const char* kNvmeRdmaHint =
    "run modprobe nvme-rdma and connect a controller (nvme connect -t rdma ...)";
constexpr const char* kNvmetRdmaHint =
    "run modprobe nvmet-rdma and configure an RDMA port in /sys/kernel/config/nvmet";

std::vector<HookSpec> HostRdmaHooks() {
  return {
      SetupCmdHook(kNvmeRdmaHint),
      FunctionHook("nvme_rdma_post_send", "nvme_rdma", "nvme_rdma",
                   "H2 (command capsule SEND posted)", true, false, kNvmeRdmaHint),
      FunctionHook("nvme_rdma_recv_done", "nvme_rdma", "nvme_rdma",
                   "H3 (response capsule received)", true, false, kNvmeRdmaHint),
      HostCompletionHook(),
  };
}

std::vector<HookSpec> TargetRdmaHooks() {
  auto nvmet_rdma = [](const char* name, const char* stamps, bool required) {
    return FunctionHook(name, "nvmet_rdma", "nvmet_rdma", stamps, required, false, kNvmetRdmaHint);
  };
  // T0 is T1: nvmet_rdma_recv_done calls nvmet_req_init (bpf/ntprof_nvmet_target.h)
  std::vector<HookSpec> hooks = NvmetCoreHooks(kNvmetRdmaHint);
  // ib_core's post of the RDMA READ that pulls a write's data: only such writes run it
  hooks.push_back(FunctionHook("rdma_rw_ctx_post", "ib_core", "nvmet_rdma",
                               "T_XFER_POSTED of writes (RDMA READ of the data posted)", false,
                               false, kNvmetRdmaHint));
  hooks.push_back(nvmet_rdma("nvmet_rdma_read_data_done",
                             "T_XFER_DONE, T_DATA_RECEIVED of writes (RDMA READ done)", false));
  hooks.push_back(nvmet_rdma("nvmet_rdma_send_done",
                             "T5, T_XFER_DONE of reads; T_RESPONSE_SENT; emits the record", true));
  return hooks;
}

// ---- a local block device ----------------------------------------------------------------------

std::vector<HookSpec> LocalHooks() {
  return {
      TracepointHook("block", "block_rq_issue", "", "", "H1; sampling decision", true),
      TracepointHook("block", "block_rq_complete", "", "", "H5; emits the record", true),
  };
}

WatchedDevices WatchLocal(Role, const std::string& device, const NvmeHostView&) {
  WatchedDevices w;
  auto dev = ResolveBlockDevice(device);
  w.present = dev.ok();
  if (w.present) w.devices.push_back(*dev);
  return w;
}

}  // namespace

const std::vector<TransportRow>& Transports() {
  static const std::vector<TransportRow> rows = {
      {.transport = v1::TRANSPORT_TCP,
       .display_name = "NVMe/TCP",
       .host = {NTPROF_BPF_OBJECT(host_tcp), HostTcpHooks},
       .target = {NTPROF_BPF_OBJECT(target_tcp), TargetTcpHooks},
       .local_device = false,
       .spdk = true,
       .page_addresses = true,
       .watch = WatchNvmeOf<v1::TRANSPORT_TCP>},
      {.transport = v1::TRANSPORT_RDMA,
       .display_name = "NVMe/RDMA",
       .host = {NTPROF_BPF_OBJECT(host_rdma), HostRdmaHooks},
       .target = {NTPROF_BPF_OBJECT(target_rdma), TargetRdmaHooks},
       .local_device = false,
       .spdk = true,
       .watch = WatchNvmeOf<v1::TRANSPORT_RDMA>},
      {.transport = v1::TRANSPORT_LOCAL,
       .display_name = "a local block device",
       .host = {NTPROF_BPF_OBJECT(local_block), LocalHooks},
       .target = {},  // host only
       .local_device = true,
       .spdk = false,
       .watch = WatchLocal},
  };
  return rows;
}

const TransportRow* FindTransport(v1::Transport transport) {
  for (const TransportRow& row : Transports()) {
    if (row.transport == transport) return &row;
  }
  return nullptr;
}

std::optional<v1::Transport> ParseTransport(const std::string& name) {
  std::optional<v1::Transport> t = TransportByName(name);
  if (!t || !FindTransport(*t)) return std::nullopt;
  return t;
}

std::vector<std::string> TransportNames() {
  std::vector<std::string> out;
  for (const TransportRow& row : Transports()) out.push_back(row.name());
  return out;
}

std::string TransportChoices() { return absl::StrJoin(TransportNames(), "|"); }

std::string TransportHelp() {
  std::vector<std::string> parts;
  for (const TransportRow& row : Transports()) {
    std::string part = absl::StrCat(row.name(), " (", row.display_name);
    if (!row.target.offered()) absl::StrAppend(&part, ", host role only");
    if (!row.host.offered()) absl::StrAppend(&part, ", target role only");
    parts.push_back(part + ")");
  }
  if (parts.size() > 1) parts.back() = "or " + parts.back();
  return absl::StrJoin(parts, ", ");
}

std::string CheckTransportArguments(Role role, v1::Transport transport, const std::string& device,
                                    bool recording) {
  const std::string flag = "--transport " + TransportName(transport);
  const TransportRow* row = FindTransport(transport);
  if (!row) return flag + ": is not supported by this build";
  if (!row->side(role).offered()) {
    return absl::StrCat(flag, ": is only for --role ",
                        RoleName(role == Role::kHost ? Role::kTarget : Role::kHost));
  }
  if (recording && row->local_device && device.empty())
    return absl::StrCat("--device (the block device, needed with ", flag, ") is required");
  return "";
}

std::string CheckSpdkTransport(v1::Transport transport) {
  const TransportRow* row = FindTransport(transport);
  if (row && row->spdk) return "";
  std::vector<std::string> spdk;
  for (const TransportRow& r : Transports()) {
    if (r.spdk) spdk.push_back(r.name());
  }
  return absl::StrCat("--transport ", TransportName(transport), ": is not an SPDK transport (",
                      absl::StrJoin(spdk, " or "), ")");
}

std::vector<HookSpec> HooksFor(Role role, v1::Transport transport) {
  const TransportRow* row = FindTransport(transport);
  if (!row || !row->side(role).offered()) return {};
  return row->side(role).hooks();
}

absl::StatusOr<std::unique_ptr<BpfObjectHandle>> OpenBpfObject(Role role, v1::Transport transport,
                                                               const std::string& btf_path) {
  const TransportRow* row = FindTransport(transport);
  if (!row || !row->side(role).offered()) {
    return absl::InvalidArgumentError(CheckTransportArguments(role, transport, "", false));
  }
  return row->side(role).open_bpf_object(btf_path);
}

}  // namespace ntprof::agent
