// A kernel described by hand, for HookPlan tests: which modules are loaded (with BTF or not),
// which functions are in BTF / traceable / in kallsyms, which tracepoints exist, and whether
// fentry and kprobes work.
#pragma once

#include <set>
#include <string>

#include "kernel_facts.h"

namespace ntprof::agent::testing {

class FakeKernelFacts : public KernelFacts {
 public:
  std::set<std::string> modules;          // loaded
  std::set<std::string> modules_with_btf; // "" = vmlinux
  std::set<std::string> btf_functions;    // "module:function", module "" for vmlinux
  std::set<std::string> traceable;        // available_filter_functions
  std::set<std::string> kallsyms;
  std::set<std::string> tracepoints;      // "category:name"
  std::set<std::string> btf_tracepoints;  // "module:name": btf_trace_<name> in that BTF
  Support fentry{true, ""};
  Support kprobes{true, ""};

  bool ModuleLoaded(const std::string& m) const override { return m.empty() || modules.count(m); }
  bool HasBtf(const std::string& m) const override {
    return ModuleLoaded(m) && modules_with_btf.count(m);
  }
  bool FunctionInBtf(const std::string& m, const std::string& f) const override {
    return HasBtf(m) && btf_functions.count(m + ":" + f);
  }
  bool TracepointExists(const std::string& c, const std::string& n) const override {
    return tracepoints.count(c + ":" + n) > 0;
  }
  bool TracepointInBtf(const std::string& m, const std::string& n) const override {
    return HasBtf(m) && btf_tracepoints.count(m + ":" + n);
  }
  bool FunctionTraceable(const std::string& f) const override { return traceable.count(f) > 0; }
  bool FunctionInKallsyms(const std::string& f) const override {
    return kallsyms.count(f) > 0 || traceable.count(f) > 0;
  }
  uint64_t SymbolAddress(const std::string&) const override { return 0; }
  Support Fentry() const override { return fentry; }
  Support Kprobes() const override { return kprobes; }

  // "module:function" entries: in BTF and traceable.
  void AddFunctions(std::initializer_list<const char*> functions) {
    for (const char* f : functions) {
      btf_functions.insert(f);
      std::string fn(f);
      traceable.insert(fn.substr(fn.find(':') + 1));
    }
  }

  // Debian 6.1 with nvme-tcp and nvmet-tcp loaded: everything docs/hooks.md says attaches there.
  static FakeKernelFacts Debian61() {
    FakeKernelFacts k;
    k.modules = {"nvme_core", "nvme_tcp", "nvmet", "nvmet_tcp"};
    k.modules_with_btf = {"", "nvme_core", "nvme_tcp", "nvmet", "nvmet_tcp"};
    k.AddFunctions({":kernel_sendpage", ":kernel_sendmsg", ":kernel_recvmsg", ":skb_copy_bits",
                    "nvme_tcp:nvme_tcp_recv_skb", "nvmet:nvmet_req_init",
                    "nvmet:nvmet_req_complete",
                    "nvmet:nvmet_bdev_execute_rw", "nvmet:nvmet_file_execute_rw"});
    k.tracepoints = {"nvme:nvme_setup_cmd",    "nvme:nvme_complete_rq",  "nvmet:nvmet_req_init",
                     "nvmet:nvmet_req_complete", "block:block_rq_issue", "block:block_rq_complete",
                     "block:block_bio_queue",    "net:net_dev_queue"};
    k.btf_tracepoints = {"nvme_core:nvme_setup_cmd", "nvme_core:nvme_complete_rq",
                         "nvmet:nvmet_req_init",     "nvmet:nvmet_req_complete",
                         ":block_rq_issue",          ":block_rq_complete",
                         ":block_bio_queue",         ":net_dev_queue"};
    return k;
  }

  // Debian 12's 6.12 kernel with nvme-tcp and nvmet-tcp loaded: kernel_sendpage() is gone (Linux
  // 6.5), the drivers send with sock_sendmsg().
  static FakeKernelFacts Debian612() {
    FakeKernelFacts k = Debian61();
    k.btf_functions.erase(":kernel_sendpage");
    k.traceable.erase("kernel_sendpage");
    k.AddFunctions({":sock_sendmsg"});
    return k;
  }

  // Debian 6.1 with nvme-rdma and nvmet-rdma loaded (soft-RoCE) instead of the TCP drivers.
  static FakeKernelFacts Debian61Rdma() {
    FakeKernelFacts k = Debian61();
    k.modules = {"nvme_core", "nvme_rdma", "nvmet", "nvmet_rdma", "ib_core", "rdma_rxe"};
    k.modules_with_btf = {"", "nvme_core", "nvme_rdma", "nvmet", "nvmet_rdma", "ib_core"};
    k.AddFunctions({"nvme_rdma:nvme_rdma_post_send", "nvme_rdma:nvme_rdma_recv_done",
                    "nvmet_rdma:nvmet_rdma_recv_done", "ib_core:rdma_rw_ctx_post",
                    "nvmet_rdma:nvmet_rdma_read_data_done", "nvmet_rdma:nvmet_rdma_send_done"});
    return k;
  }

  // This development machine: 6.18, no NVMe modules, fentry refused, no kprobes.
  static FakeKernelFacts DevMachine() {
    FakeKernelFacts k;
    k.modules_with_btf = {""};
    k.btf_functions = {":kernel_sendmsg", ":sock_sendmsg", ":kernel_recvmsg", ":skb_copy_bits"};
    k.tracepoints = {"block:block_rq_issue", "block:block_rq_complete"};
    k.btf_tracepoints = {":block_rq_issue", ":block_rq_complete"};
    k.fentry = {false, "fentry/fexit refused by this kernel: BPF_PROG_LOAD failed with EPERM (1)"};
    k.kprobes = {false, "kprobes not available on this kernel"};
    return k;
  }
};

}  // namespace ntprof::agent::testing
