#include "hook_catalog.h"

namespace ntprof::agent {
namespace {

constexpr const char* kNvmeTcpHint = "run modprobe nvme-tcp and connect a controller (nvme connect -t tcp ...)";
constexpr const char* kNvmetTcpHint =
    "run modprobe nvmet-tcp and configure a TCP port in /sys/kernel/config/nvmet";
constexpr const char* kNvmeRdmaHint =
    "run modprobe nvme-rdma and connect a controller (nvme connect -t rdma ...)";
constexpr const char* kNvmetRdmaHint =
    "run modprobe nvmet-rdma and configure an RDMA port in /sys/kernel/config/nvmet";
// Linux 6.5 removed kernel_sendpage(): from then on nvme-tcp and nvmet-tcp hand PDUs to TCP with
// sock_sendmsg() and MSG_SPLICE_PAGES (bpf/ntprof_tcp_send.h). Each kernel gets one send path.
const KernelPath kSendpagePath{"kernel_sendpage", true,
                               "not used on this kernel: kernel_sendpage() is gone (Linux >= 6.5), "
                               "NVMe/TCP sends with sock_sendmsg()"};
const KernelPath kSpliceSendPath{"kernel_sendpage", false,
                                 "not used on this kernel: it has kernel_sendpage() (Linux < 6.5), "
                                 "which NVMe/TCP sends with"};

const std::vector<AttachType> kTracepointVariants = {AttachType::kTpBtf, AttachType::kRawTp};
const std::vector<AttachType> kFunctionVariants = {AttachType::kFentry, AttachType::kKprobe};
const std::vector<AttachType> kCoreFunctionVariants = {AttachType::kTpBtf, AttachType::kRawTp,
                                                       AttachType::kFentry, AttachType::kKprobe};

HookSpec Tracepoint(std::string category, std::string name, std::string module,
                    std::string types_module, std::string stamps, bool required,
                    std::string fix_hint = "") {
  HookSpec h;
  h.name = std::move(name);
  h.tp_category = std::move(category);
  h.module = std::move(module);
  h.types_module = std::move(types_module);
  h.stamps = std::move(stamps);
  h.required = required;
  h.fix_hint = std::move(fix_hint);
  h.variants = kTracepointVariants;
  return h;
}

HookSpec Function(std::string name, std::string module, std::string types_module,
                  std::string stamps, bool required, bool on_return, std::string fix_hint,
                  std::string absent_hint = "") {
  HookSpec h;
  h.name = std::move(name);
  h.module = std::move(module);
  h.types_module = std::move(types_module);
  h.stamps = std::move(stamps);
  h.required = required;
  h.on_return = on_return;
  h.fix_hint = std::move(fix_hint);
  h.absent_hint = std::move(absent_hint);
  h.variants = kFunctionVariants;
  return h;
}

// The socket send calls that carry NVMe/TCP PDUs, on either kernel path. They stamp the entry of
// the call that began handing a PDU to TCP (it keeps the network stage causal) and follow the PDU
// stream at the calls' return. `stamps` is what the role's PDUs provide.
std::vector<HookSpec> TcpSendHooks(const std::string& stamps, const char* types_module,
                                   const char* hint) {
  auto send = [&](const char* name, std::string what, bool required, const KernelPath& path) {
    HookSpec h = Function(name, "", types_module, std::move(what), required, true, hint);
    h.on_entry_too = true;
    h.only_on = path;
    return h;
  };
  return {
      send("kernel_sendpage", stamps + " (PDUs handed to TCP)", true, kSendpagePath),
      send("kernel_sendmsg", stamps + " when data digests or sock_no_sendpage are used", false,
           kSendpagePath),
      send("sock_sendmsg", stamps + " (PDUs handed to TCP with MSG_SPLICE_PAGES; digests)", true,
           kSpliceSendPath),
  };
}

// nvme_core and the block layer: H0/H1, H4, H5 of every kernel host transport.
HookSpec SetupCmdHook(const char* hint) {
  return Tracepoint("nvme", "nvme_setup_cmd", "nvme_core", "nvme_core", "H0, H1; sampling decision",
                    true, hint);
}
std::vector<HookSpec> HostCompletionHooks(const char* hint) {
  return {
      Tracepoint("nvme", "nvme_complete_rq", "nvme_core", "nvme_core", "H4", true,
                 hint),
      Tracepoint("block", "block_rq_complete", "", "", "H5; emits the record", true),
  };
}

std::vector<HookSpec> HostTcpHooks() {
  std::vector<HookSpec> hooks = {SetupCmdHook(kNvmeTcpHint)};
  for (HookSpec& h : TcpSendHooks("H2, H_DATA_SENT", "nvme_tcp", kNvmeTcpHint))
    hooks.push_back(std::move(h));
  hooks.push_back(Function("nvme_tcp_recv_skb", "nvme_tcp", "nvme_tcp",
                           "H3 (which queue is receiving)", true, false, kNvmeTcpHint));
  hooks.push_back(Function("skb_copy_bits", "", "", "H3, H_RESPONSE_RECEIVED, H_R2T_RECEIVED",
                           true, true, kNvmeTcpHint));
  for (HookSpec& h : HostCompletionHooks(kNvmeTcpHint)) hooks.push_back(std::move(h));
  return hooks;
}

std::vector<HookSpec> HostRdmaHooks() {
  std::vector<HookSpec> hooks = {
      SetupCmdHook(kNvmeRdmaHint),
      Function("nvme_rdma_post_send", "nvme_rdma", "nvme_rdma", "H2 (command capsule SEND posted)",
               true, false, kNvmeRdmaHint),
      Function("nvme_rdma_recv_done", "nvme_rdma", "nvme_rdma",
               "H3 (response capsule received)", true, false, kNvmeRdmaHint),
  };
  for (HookSpec& h : HostCompletionHooks(kNvmeRdmaHint)) hooks.push_back(std::move(h));
  return hooks;
}

// nvmet core and the backing device: T1, T2, T3 and the drive stamps of every kernel target
// transport.
std::vector<HookSpec> NvmetCoreHooks(const char* hint) {
  HookSpec req_init = Tracepoint("nvmet", "nvmet_req_init", "nvmet", "nvmet", "T1", true, hint);
  req_init.variants = kCoreFunctionVariants;
  HookSpec req_complete = Tracepoint("nvmet", "nvmet_req_complete", "nvmet", "nvmet", "T3", true,
                                     hint);
  req_complete.variants = kCoreFunctionVariants;
  return {
      req_init,
      Function("nvmet_bdev_execute_rw", "nvmet", "nvmet", "T2 (block device namespaces)", false,
               false, hint),
      Function("nvmet_file_execute_rw", "nvmet", "nvmet", "T2 (file namespaces)", false, false,
               hint),
      Tracepoint("block", "block_rq_issue", "", "", "T_DRIVE_ISSUE", false),
      Tracepoint("block", "block_rq_complete", "", "", "T_DRIVE_DONE", false),
      req_complete,
  };
}

std::vector<HookSpec> TargetTcpHooks() {
  std::vector<HookSpec> hooks = {
      Function("kernel_recvmsg", "", "nvmet_tcp", "T0; sampling decision; T_DATA_RECEIVED", true,
               true, kNvmetTcpHint),
  };
  for (HookSpec& h : NvmetCoreHooks(kNvmetTcpHint)) hooks.push_back(std::move(h));
  hooks.push_back(Function("nvmet_tcp_queue_response", "nvmet_tcp", "nvmet_tcp", "T4", false, false,
                           kNvmetTcpHint));
  for (HookSpec& h : TcpSendHooks("T5, T_R2T_SENT, T_RESPONSE_SENT; emits the record",
                                  "nvmet_tcp", kNvmetTcpHint))
    hooks.push_back(std::move(h));
  return hooks;
}

std::vector<HookSpec> TargetRdmaHooks() {
  auto nvmet_rdma = [](const char* name, const char* stamps, bool required) {
    return Function(name, "nvmet_rdma", "nvmet_rdma", stamps, required, false, kNvmetRdmaHint);
  };
  std::vector<HookSpec> hooks = {
      nvmet_rdma("nvmet_rdma_recv_done", "T0 (capsule received); sampling decision", true),
  };
  for (HookSpec& h : NvmetCoreHooks(kNvmetRdmaHint)) hooks.push_back(std::move(h));
  hooks.push_back(nvmet_rdma("nvmet_rdma_execute_command",
                             "T_XFER_POSTED of writes (RDMA READ of the data posted)", false));
  hooks.push_back(nvmet_rdma("nvmet_rdma_read_data_done",
                             "T_XFER_DONE, T_DATA_RECEIVED of writes (RDMA READ done)", false));
  hooks.push_back(nvmet_rdma("nvmet_rdma_queue_response",
                             "T4; T5 of commands without read data; T_XFER_POSTED of reads", true));
  hooks.push_back(nvmet_rdma("nvmet_rdma_send_done",
                             "T5, T_XFER_DONE of reads; T_RESPONSE_SENT; emits the record", true));
  return hooks;
}

std::vector<HookSpec> LocalHooks() {
  return {
      Tracepoint("block", "block_rq_issue", "", "", "H1; sampling decision", true),
      Tracepoint("block", "block_rq_complete", "", "", "H5; emits the record",
                 true),
  };
}

}  // namespace

std::string HookSpec::event() const {
  if (is_tracepoint()) return "tracepoint " + tp_category + ":" + name;
  std::string where = module.empty() ? "" : module + ":";
  return where + name + (on_return ? "() return" : "() entry");
}

std::string AttachTypeName(AttachType type, bool on_return) {
  switch (type) {
    case AttachType::kTpBtf:
      return "tp_btf";
    case AttachType::kRawTp:
      return "raw_tp";
    case AttachType::kFentry:
      return on_return ? "fexit" : "fentry";
    case AttachType::kKprobe:
      return on_return ? "kretprobe" : "kprobe";
  }
  return "?";
}

std::vector<std::string> VariantPrograms(const HookSpec& hook, AttachType type) {
  switch (type) {
    case AttachType::kTpBtf:
      return {hook.name + "_tp"};
    case AttachType::kRawTp:
      return {hook.name + "_rawtp"};
    case AttachType::kFentry:
      if (hook.on_return && hook.on_entry_too) return {hook.name + "_fentry", hook.name + "_fexit"};
      return {hook.name + (hook.on_return ? "_fexit" : "_fentry")};
    case AttachType::kKprobe:
      if (hook.on_return) return {hook.name + "_kprobe", hook.name + "_kretprobe"};
      return {hook.name + "_kprobe"};
  }
  return {};
}

std::vector<HookSpec> HooksFor(Role role, Transport transport) {
  switch (transport) {
    case Transport::kLocal:
      return LocalHooks();
    case Transport::kRdma:
      return role == Role::kHost ? HostRdmaHooks() : TargetRdmaHooks();
    case Transport::kTcp:
      break;
  }
  return role == Role::kHost ? HostTcpHooks() : TargetTcpHooks();
}

}  // namespace ntprof::agent
