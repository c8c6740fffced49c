#include "kernel_facts.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::string FindTracefs() {
  for (const char* p : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (Exists(std::string(p) + "/events")) return p;
  }
  return "";
}

std::string ErrnoText(int err) {
  return std::string(err == EPERM ? "EPERM" : strerrordesc_np(err)) + " (" + std::to_string(err) + ")";
}

// Load and attach a two-instruction fentry program on a kernel function: the only way to know
// whether this kernel lets BPF trampolines in (lockdown, LSMs and missing JIT support all refuse).
Support ProbeFentry(struct btf* vmlinux) {
  if (!vmlinux) return {false, "no kernel BTF (/sys/kernel/btf/vmlinux): fentry needs it"};
  int id = -1;
  for (const char* fn : {"vfs_read", "ksys_read", "do_sys_open"}) {
    id = btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC);
    if (id > 0) break;
  }
  if (id <= 0) return {false, "no probe function in kernel BTF"};
  struct bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = 0
  insns[1].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = static_cast<__u32>(id));
  int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ntprof_probe", "GPL", insns, 2, &opts);
  if (prog < 0) {
    int err = errno;
    return {false, "fentry/fexit refused by this kernel: BPF_PROG_LOAD failed with " +
                       ErrnoText(err) +
                       (err == EPERM ? " (lockdown, an LSM or missing CAP_BPF/CAP_PERFMON)" : "")};
  }
  int link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, nullptr);
  int err = errno;
  close(prog);
  if (link < 0) {
    return {false, "fentry/fexit refused by this kernel: attaching a trampoline failed with " +
                       ErrnoText(err)};
  }
  close(link);
  return {true, ""};
}

}  // namespace

LiveKernelFacts::LiveKernelFacts() : tracefs_(FindTracefs()) {}

LiveKernelFacts::~LiveKernelFacts() {
  for (auto& [name, b] : btf_) btf__free(b);
}

// A loadable module has /sys/module/M/initstate; a built-in one may have /sys/module/M (if it has
// parameters) and lives in the kernel image, BTF included.
bool LiveKernelFacts::ModuleLoaded(const std::string& module) const {
  return module.empty() || Exists("/sys/module/" + module);
}

static bool IsBuiltin(const std::string& module) {
  return !module.empty() && Exists("/sys/module/" + module) &&
         !Exists("/sys/module/" + module + "/initstate");
}

bool LiveKernelFacts::HasBtf(const std::string& module) const { return Btf(module) != nullptr; }

struct btf* LiveKernelFacts::Btf(const std::string& module) const {
  if (IsBuiltin(module)) return Btf("");
  auto it = btf_.find(module);
  if (it != btf_.end()) return it->second;
  struct btf* b = nullptr;
  if (module.empty()) {
    b = btf__load_vmlinux_btf();
  } else if (Exists("/sys/kernel/btf/" + module)) {
    b = btf__load_module_btf(module.c_str(), Btf(""));
  }
  if (libbpf_get_error(b)) b = nullptr;
  btf_[module] = b;
  return b;
}

bool LiveKernelFacts::FunctionInBtf(const std::string& module, const std::string& function) const {
  struct btf* b = Btf(module);
  return b && btf__find_by_name_kind(b, function.c_str(), BTF_KIND_FUNC) > 0;
}

bool LiveKernelFacts::TracepointExists(const std::string& category, const std::string& name) const {
  if (!tracefs_.empty()) return Exists(tracefs_ + "/events/" + category + "/" + name);
  // No tracefs mounted: the kernel still has the tracepoint if the kernel's or a module's BTF has
  // its btf_trace_<name> type.
  if (TracepointInBtf("", name)) return true;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/kernel/btf", ec)) {
    std::string module = entry.path().filename();
    if (module != "vmlinux" && TracepointInBtf(module, name)) return true;
  }
  return false;
}

bool LiveKernelFacts::TracepointInBtf(const std::string& module, const std::string& name) const {
  struct btf* b = Btf(module);
  return b && btf__find_by_name_kind(b, ("btf_trace_" + name).c_str(), BTF_KIND_TYPEDEF) > 0;
}

// Names without their " [module]" column: the first field of available_filter_functions, the
// third of kallsyms.
const SymbolColumn& LiveKernelFacts::FilterFunctions() const {
  if (!filter_functions_) {
    filter_functions_ = SymbolColumn::Read(tracefs_ + "/available_filter_functions", 0);
  }
  return *filter_functions_;
}

const SymbolColumn& LiveKernelFacts::Kallsyms() const {
  if (!kallsyms_) kallsyms_ = SymbolColumn::Read("/proc/kallsyms", 2);
  return *kallsyms_;
}

bool LiveKernelFacts::FunctionTraceable(const std::string& function) const {
  if (tracefs_.empty()) return FunctionInKallsyms(function);  // cannot tell better
  return FilterFunctions().Contains(function);
}

bool LiveKernelFacts::FunctionInKallsyms(const std::string& function) const {
  return Kallsyms().Contains(function);
}

uint64_t LiveKernelFacts::SymbolAddress(const std::string& name) const {
  std::string_view line = Kallsyms().LineOf(name);  // "ffffffff8a2c5e58 D vmemmap_base"
  return std::strtoull(std::string(line.substr(0, line.find(' '))).c_str(), nullptr, 16);
}

Support LiveKernelFacts::Fentry() const {
  if (!fentry_) fentry_ = ProbeFentry(Btf(""));
  return *fentry_;
}

Support LiveKernelFacts::Kprobes() const {
  // libbpf attaches kprobes through the perf kprobe PMU, or tracefs kprobe_events on old kernels.
  if (Exists("/sys/bus/event_source/devices/kprobe/type")) return {true, ""};
  if (!tracefs_.empty() && Exists(tracefs_ + "/kprobe_events")) return {true, ""};
  return {false,
          "kprobes not available on this kernel (no kprobe PMU in "
          "/sys/bus/event_source/devices and no kprobe_events in tracefs: CONFIG_KPROBES is off)"};
}

}  // namespace ntprof::agent
