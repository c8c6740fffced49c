// What a hook is and the ways it can attach: the data behind the HookPlan. One entry per kernel
// event; the BPF programs are named <hook>_<variant suffix>. Each transport's hook lists are in its
// row of the transport registry (transports.cpp), built from the pieces below.
#pragma once

#include <string>
#include <vector>


namespace ntprof::agent {

// How a program attaches, in the order we prefer them: BTF-typed tracepoints and trampolines are
// cheaper and safer than raw tracepoints and kprobes.
enum class AttachType {
  kTpBtf,  // tp_btf: BTF-typed tracepoint                  program suffix _tp
  kRawTp,  // raw tracepoint, no BTF needed                  _rawtp
  kFentry, // fentry (fexit for return hooks), BPF trampoline  _fentry / _fexit
  kKprobe, // kprobe (+ kretprobe for return hooks)          _kprobe (+ _kretprobe)
};

struct HookSpec {
  std::string name;          // the tracepoint or kernel function
  std::string tp_category;   // non-empty: a tracepoint of this category (block, nvme, nvmet)
  std::string module;        // where the function/tracepoint lives; "" = the kernel image
  std::string types_module;  // module whose private structs the program reads; "" = none
  std::string stamps;        // what it provides, for `probe`
  bool required = false;     // without it the role cannot record
  bool on_return = false;    // needs the return value (fexit / kretprobe)
  // Loaded and proven attachable at start like the others, then attached only while the recorder
  // asks for it (block_bio_queue: only while a namespace's disk gives T2 no other way)
  bool on_demand = false;
  std::string fix_hint;      // what to do when its module is not loaded
  std::string absent_hint;   // why the function may not exist on a kernel (renamed, removed)
  std::vector<AttachType> variants;  // candidates, preferred first

  bool is_tracepoint() const { return !tp_category.empty(); }
  std::string event() const;  // "tracepoint nvme:nvme_setup_cmd" / "nvme_tcp_recv_skb() entry"
};

// Name of the attach type as the user reads it ("fexit" for a return hook's fentry variant).
std::string AttachTypeName(AttachType type, bool on_return);
// The BPF programs a variant consists of (a kprobe return hook is a kprobe + kretprobe pair).
std::vector<std::string> VariantPrograms(const HookSpec& hook, AttachType type);

// A hook on a tracepoint (tp_btf, else raw_tp) and one on a kernel function's entry or return
// (fentry/fexit, else kprobe/kretprobe).
HookSpec TracepointHook(std::string category, std::string name, std::string module,
                        std::string types_module, std::string stamps, bool required,
                        std::string fix_hint = "");
HookSpec FunctionHook(std::string name, std::string module, std::string types_module,
                      std::string stamps, bool required, bool on_return, std::string fix_hint,
                      std::string absent_hint = "");

// The hooks every kernel transport shares; `hint` is what to do when its driver is not loaded.
// nvme_core and the block layer: H0/H1 (and the sampling decision) of every host transport ...
HookSpec SetupCmdHook(const char* hint);
// ... and its H4 and H5, both stamped at block_rq_complete (the record is emitted there).
HookSpec HostCompletionHook();
// nvmet core and the backing device: T1 (where every target transport takes its sampling
// decision), T2, T3 and the drive stamps.
std::vector<HookSpec> NvmetCoreHooks(const char* hint);

}  // namespace ntprof::agent
