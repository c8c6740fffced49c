#include <catch2/catch.hpp>

#include "fake_kernel_facts.h"
#include "hook_plan.h"

namespace ntprof::agent {
namespace {

using testing::FakeKernelFacts;

const HookDecision& Hook(const HookPlan& plan, const std::string& name) {
  for (const HookDecision& d : plan.hooks()) {
    if (d.hook.name == name) return d;
  }
  FAIL("no hook " << name);
  throw;
}

bool Planned(const HookPlan& plan, const std::string& name) {
  for (const HookDecision& d : plan.hooks()) {
    if (d.hook.name == name) return true;
  }
  return false;
}

std::string Chosen(const HookPlan& plan, const std::string& name) {
  const HookDecision& d = Hook(plan, name);
  const VariantVerdict* v = d.chosen_variant();
  return v ? AttachTypeName(v->type, d.hook.on_return) : "none";
}

TEST_CASE("debian_61_prefers_btf_tracepoints_and_trampolines") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  CHECK(host.CheckRequired().ok());
  CHECK(Chosen(host, "nvme_setup_cmd") == "tp_btf");
  CHECK(Chosen(host, "block_rq_complete") == "tp_btf");
  CHECK_FALSE(Planned(host, "nvme_complete_rq"));  // H4 is stamped at H5 (ntprof_nvme_host.h)
  CHECK(Chosen(host, "net_dev_queue") == "tp_btf");  // the capsule seen leaving at the device
  CHECK_FALSE(Planned(host, "kernel_sendpage"));
  // the reply headers read out of each skb the driver reads: one run per skb, not per header
  CHECK(Chosen(host, "nvme_tcp_recv_skb") == "fentry");
  CHECK_FALSE(Planned(host, "skb_copy_bits"));
  CHECK(host.MissingOptional().empty());

  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_TCP, k, {});
  CHECK(target.CheckRequired().ok());
  CHECK_FALSE(Planned(target, "kernel_recvmsg"));  // T0 is T1, T_DATA_RECEIVED is T2
  // the target finds its replies in the skbs queued to the device: no socket send hook
  CHECK(Chosen(target, "net_dev_queue") == "tp_btf");
  CHECK_FALSE(Planned(target, "kernel_sendpage"));
  CHECK(Chosen(target, "block_bio_queue") == "tp_btf");  // T2 without a trampoline
  CHECK_FALSE(Planned(target, "nvmet_bdev_execute_rw"));
  CHECK(Chosen(target, "nvmet_req_init") == "tp_btf");
  CHECK_FALSE(Planned(target, "nvmet_tcp_queue_response"));  // T4 is T3 (ntprof_nvmet_target.h)
  CHECK(Chosen(target, "block_rq_issue") == "tp_btf");
  CHECK_FALSE(Planned(target, "block_rq_complete"));  // the drive's done is stamped at T3
}

TEST_CASE("chosen_variant_programs_are_the_only_ones_loaded") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  std::vector<std::string> progs = host.ChosenPrograms();
  CHECK(std::count(progs.begin(), progs.end(), "nvme_tcp_recv_skb_fentry") == 1);
  CHECK(std::count(progs.begin(), progs.end(), "nvme_tcp_recv_skb_kprobe") == 0);
  CHECK(std::count(progs.begin(), progs.end(), "net_dev_queue_rawtp") == 0);
  CHECK(std::count(progs.begin(), progs.end(), "nvme_setup_cmd_tp") == 1);
}

TEST_CASE("fentry_refused_falls_back_to_kprobe_pairs") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  k.fentry = {false, "fentry/fexit refused by this kernel: EPERM"};
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  CHECK(host.CheckRequired().ok());
  CHECK(Chosen(host, "nvme_tcp_recv_skb") == "kprobe");
  CHECK(Hook(host, "nvme_tcp_recv_skb").variants[0].reason.find("EPERM") != std::string::npos);
  const VariantVerdict* v = Hook(host, "nvme_tcp_recv_skb").chosen_variant();
  REQUIRE(v);
  CHECK(v->programs == std::vector<std::string>{"nvme_tcp_recv_skb_kprobe"});
  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_TCP, k, {});
  CHECK(Chosen(target, "net_dev_queue") == "tp_btf");  // tracepoints do not need trampolines
  CHECK(Chosen(host, "nvme_setup_cmd") == "tp_btf");
}

TEST_CASE("fentry_refused_and_no_kprobes_names_both_reasons") {
  // This development machine with NVMe/TCP modules: neither kind of function hook attaches.
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  k.fentry = {false, "fentry/fexit refused by this kernel: EPERM"};
  k.kprobes = {false, "kprobes not available on this kernel"};
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  absl::Status s = host.CheckRequired();
  REQUIRE_FALSE(s.ok());
  std::string msg(s.message());
  CHECK(msg.find("cannot attach nvme_tcp_recv_skb") == 0);
  CHECK(msg.find("fentry: fentry/fexit refused") != std::string::npos);
  CHECK(msg.find("kprobe: kprobes not available") != std::string::npos);
}

TEST_CASE("missing_module_stops_with_its_name_and_the_fix") {
  FakeKernelFacts k = FakeKernelFacts::DevMachine();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  absl::Status s = host.CheckRequired();
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()) ==
        "cannot attach nvme_setup_cmd (H0, H1; sampling decision): module nvme_core not loaded; "
        "run modprobe nvme-tcp and connect a controller (nvme connect -t tcp ...)");

  k.modules = {"nvme_core"};
  k.modules_with_btf.insert("nvme_core");
  k.tracepoints.insert("nvme:nvme_setup_cmd");
  k.tracepoints.insert("nvme:nvme_complete_rq");
  k.btf_tracepoints.insert("nvme_core:nvme_setup_cmd");
  k.btf_tracepoints.insert("nvme_core:nvme_complete_rq");
  s = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {}).CheckRequired();
  REQUIRE_FALSE(s.ok());
  // the next required hook reads nvme_tcp's types
  CHECK(std::string(s.message()).find("cannot attach net_dev_queue") == 0);
  CHECK(std::string(s.message()).find("module nvme_tcp not loaded; run modprobe nvme-tcp") !=
        std::string::npos);
}

TEST_CASE("module_without_btf_needs_external_btf") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  k.modules_with_btf.erase("nvmet");
  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_TCP, k, {});
  REQUIRE_FALSE(target.CheckRequired().ok());
  CHECK(Hook(target, "block_bio_queue").unavailable_reason().find("has no BTF") !=
        std::string::npos);  // the kernel's tracepoint, but it reads nvmet's request

  PlanInputs with_btf{.external_btf = true};
  HookPlan fixed = PlanHooks(Role::kTarget, v1::TRANSPORT_TCP, k, with_btf);
  CHECK(fixed.CheckRequired().ok());
  CHECK(Chosen(fixed, "block_bio_queue") == "tp_btf");      // a vmlinux tracepoint
  CHECK(Chosen(fixed, "nvmet_file_execute_rw") == "kprobe");  // no module BTF: no trampoline
}

TEST_CASE("both_kernels_see_tcp_pdus_leave_at_the_device") {
  // Linux 6.5 changed the socket send call NVMe/TCP hands PDUs to TCP with (kernel_sendpage ->
  // sock_sendmsg); the skbs queued to the device carry them the same way on both
  for (const FakeKernelFacts& k : {FakeKernelFacts::Debian61(), FakeKernelFacts::Debian612()}) {
    for (Role role : {Role::kHost, Role::kTarget}) {
      HookPlan plan = PlanHooks(role, v1::TRANSPORT_TCP, k, {});
      CHECK(plan.CheckRequired().ok());
      CHECK(Chosen(plan, "net_dev_queue") == "tp_btf");
      CHECK(plan.MissingOptional().empty());
      for (const char* send : {"kernel_sendpage", "kernel_sendmsg", "sock_sendmsg"})
        CHECK_FALSE(Planned(plan, send));
    }
  }
  FakeKernelFacts k = FakeKernelFacts::Debian612();
  k.fentry = {false, "fentry/fexit refused by this kernel: EPERM"};
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  CHECK(Chosen(host, "nvme_tcp_recv_skb") == "kprobe");
  CHECK(Chosen(host, "net_dev_queue") == "tp_btf");
}

TEST_CASE("optional_hook_missing_only_removes_its_component") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  k.btf_functions.erase("nvmet:nvmet_file_execute_rw");
  k.traceable.erase("nvmet_file_execute_rw");
  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_TCP, k, {});
  CHECK(target.CheckRequired().ok());
  REQUIRE(target.MissingOptional().size() == 1);
  CHECK(target.MissingOptional()[0] == "nvmet_file_execute_rw (T2 (file namespaces))");
}

TEST_CASE("prefer_moves_a_type_first_but_keeps_fallbacks") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {.prefer_attach = "kprobe"});
  CHECK(Chosen(host, "nvme_tcp_recv_skb") == "kprobe");
  CHECK(Chosen(host, "nvme_setup_cmd") == "tp_btf");  // tracepoints have no kprobe variant
  CHECK(Chosen(host, "net_dev_queue") == "tp_btf");
}

TEST_CASE("refused_program_moves_its_hook_to_the_next_variant") {
  FakeKernelFacts k = FakeKernelFacts::Debian61();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  REQUIRE(host.MarkFailed("nvme_setup_cmd_tp", "refused at load: invalid argument"));
  CHECK(Chosen(host, "nvme_setup_cmd") == "raw_tp");
  REQUIRE(host.MarkFailed("nvme_setup_cmd_rawtp", "refused at attach: EPERM"));
  CHECK(Chosen(host, "nvme_setup_cmd") == "none");
  CHECK_FALSE(host.CheckRequired().ok());
  CHECK_FALSE(host.MarkFailed("no_such_program", "x"));
}

TEST_CASE("dev_machine_records_local_block_devices_with_tracepoints") {
  FakeKernelFacts k = FakeKernelFacts::DevMachine();
  HookPlan local = PlanHooks(Role::kHost, v1::TRANSPORT_LOCAL, k, {});
  CHECK(local.CheckRequired().ok());
  CHECK(Chosen(local, "block_rq_issue") == "tp_btf");
  CHECK(Chosen(local, "block_rq_complete") == "tp_btf");
}

TEST_CASE("plan_renders_text_and_json") {
  FakeKernelFacts k = FakeKernelFacts::DevMachine();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_TCP, k, {});
  std::string text = host.ToText();
  CHECK(text.find("nvme_tcp_recv_skb  [required]") != std::string::npos);
  CHECK(text.find("no tp_btf: module nvme_tcp not loaded") != std::string::npos);
  std::string json = host.ToJson();
  CHECK(json.find("\"ready\": false") != std::string::npos);
  CHECK(json.find("\"chosen\": null") != std::string::npos);
}

TEST_CASE("rdma_plans_use_the_nvme_rdma_and_nvmet_rdma_hooks") {
  FakeKernelFacts k = FakeKernelFacts::Debian61Rdma();
  HookPlan host = PlanHooks(Role::kHost, v1::TRANSPORT_RDMA, k, {});
  CHECK(host.CheckRequired().ok());
  CHECK(Chosen(host, "nvme_setup_cmd") == "tp_btf");
  CHECK(Chosen(host, "nvme_rdma_post_send") == "fentry");
  CHECK(Chosen(host, "nvme_rdma_recv_done") == "fentry");
  CHECK(Chosen(host, "block_rq_complete") == "tp_btf");
  CHECK(host.MissingOptional().empty());
  std::vector<std::string> progs = host.ChosenPrograms();
  CHECK(std::count(progs.begin(), progs.end(), "nvme_rdma_post_send_fentry") == 1);
  CHECK(std::count(progs.begin(), progs.end(), "kernel_sendpage_fexit") == 0);

  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_RDMA, k, {});
  CHECK(target.CheckRequired().ok());
  CHECK_FALSE(Planned(target, "nvmet_rdma_recv_done"));  // T0 is T1
  CHECK(Chosen(target, "nvmet_req_init") == "tp_btf");
  CHECK(Chosen(target, "rdma_rw_ctx_post") == "fentry");
  CHECK(Chosen(target, "nvmet_rdma_read_data_done") == "fentry");
  CHECK(Chosen(target, "nvmet_req_complete") == "tp_btf");
  CHECK_FALSE(Planned(target, "nvmet_rdma_queue_response"));  // T4 is T3
  CHECK(Chosen(target, "nvmet_rdma_send_done") == "fentry");
  CHECK(target.MissingOptional().empty());
}

TEST_CASE("rdma_falls_back_to_kprobes_and_names_the_rdma_fix") {
  FakeKernelFacts k = FakeKernelFacts::Debian61Rdma();
  k.fentry = {false, "fentry/fexit refused by this kernel: EPERM"};
  HookPlan target = PlanHooks(Role::kTarget, v1::TRANSPORT_RDMA, k, {});
  CHECK(target.CheckRequired().ok());
  CHECK(Chosen(target, "nvmet_rdma_send_done") == "kprobe");

  k = FakeKernelFacts::Debian61Rdma();
  k.modules.erase("nvmet_rdma");
  absl::Status s = PlanHooks(Role::kTarget, v1::TRANSPORT_RDMA, k, {}).CheckRequired();
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()) ==
        "cannot attach nvmet_rdma_send_done (T5, T_XFER_DONE of reads; T_RESPONSE_SENT; emits "
        "the record): module "
        "nvmet_rdma not loaded; run modprobe nvmet-rdma and configure an RDMA port in "
        "/sys/kernel/config/nvmet");
  s = PlanHooks(Role::kHost, v1::TRANSPORT_RDMA, FakeKernelFacts::Debian61(), {}).CheckRequired();
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("module nvme_rdma not loaded; run modprobe nvme-rdma") !=
        std::string::npos);
}

TEST_CASE("roles_possible_looks_at_every_transport") {
  const PlanInputs inputs;
  // NVMe/RDMA drivers only: both roles, though no NVMe/TCP hook can attach.
  CHECK(RolesPossible(FakeKernelFacts::Debian61Rdma(), inputs) ==
        std::vector<Role>{Role::kHost, Role::kTarget});
  // No NVMe-oF driver at all, block tracepoints only: a host of local devices, no target.
  CHECK(RolesPossible(FakeKernelFacts::DevMachine(), inputs) == std::vector<Role>{Role::kHost});
  CHECK(RolesPossible(FakeKernelFacts::Debian61(), inputs) ==
        std::vector<Role>{Role::kHost, Role::kTarget});
}


TEST_CASE("a_return_hook_is_an_fexit_or_a_kprobe_pair") {
  // No hook of the catalog needs a return value since the host reads reply headers at
  // nvme_tcp_recv_skb's entry; the plan still names a return hook's programs and attach types.
  HookSpec h = FunctionHook("some_call", "", "", "X", true, true, "load the module");
  CHECK(VariantPrograms(h, AttachType::kFentry) == std::vector<std::string>{"some_call_fexit"});
  CHECK(VariantPrograms(h, AttachType::kKprobe) ==
        std::vector<std::string>{"some_call_kprobe", "some_call_kretprobe"});
  CHECK(AttachTypeName(AttachType::kFentry, true) == "fexit");
  CHECK(AttachTypeName(AttachType::kKprobe, true) == "kretprobe");
  CHECK(h.event() == "some_call() return");
}

}  // namespace
}  // namespace ntprof::agent
