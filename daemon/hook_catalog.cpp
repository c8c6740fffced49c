#include "hook_catalog.h"

namespace ntprof::agent {
namespace {

const std::vector<AttachType> kTracepointVariants = {AttachType::kTpBtf, AttachType::kRawTp};
const std::vector<AttachType> kFunctionVariants = {AttachType::kFentry, AttachType::kKprobe};
const std::vector<AttachType> kCoreFunctionVariants = {AttachType::kTpBtf, AttachType::kRawTp,
                                                       AttachType::kFentry, AttachType::kKprobe};

}  // namespace

HookSpec TracepointHook(std::string category, std::string name, std::string module,
                        std::string types_module, std::string stamps, bool required,
                        std::string fix_hint) {
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

HookSpec FunctionHook(std::string name, std::string module, std::string types_module,
                      std::string stamps, bool required, bool on_return, std::string fix_hint,
                      std::string absent_hint) {
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

HookSpec SetupCmdHook(const char* hint) {
  return TracepointHook("nvme", "nvme_setup_cmd", "nvme_core", "nvme_core",
                        "H0, H1; sampling decision", true, hint);
}

HookSpec HostCompletionHook() {
  // H4 is stamped with H5: nvme_complete_rq ends the request in the same call chain, and one
  // program there instead of two is a program run per I/O less (docs/overhead.md).
  return TracepointHook("block", "block_rq_complete", "", "", "H4, H5; emits the record", true);
}

std::vector<HookSpec> NvmetCoreHooks(const char* hint) {
  HookSpec req_init =
      TracepointHook("nvmet", "nvmet_req_init", "nvmet", "nvmet",
                     "T1; sampling decision", true, hint);
  req_init.variants = kCoreFunctionVariants;
  HookSpec req_complete =
      TracepointHook("nvmet", "nvmet_req_complete", "nvmet", "nvmet",
                     "T3, T4 (the response is queued right after it), T_DRIVE_DONE", true, hint);
  req_complete.variants = kCoreFunctionVariants;
  // The bio nvmet_bdev_execute_rw builds first carries the nvmet_req (bi_private). A blk-mq disk
  // with iostats on stamps the request allocated for it, so block_rq_issue reads T2 there; this
  // tracepoint (about 65 guest instructions on every I/O of every disk) is attached only while a
  // namespace's disk has no such request (nvmet_backends.h, docs/overhead.md).
  HookSpec bio_queue = TracepointHook("block", "block_bio_queue", "", "nvmet",
                                      "T2 (bio-based disks, iostats off)", false);
  bio_queue.on_demand = true;
  return {
      req_init,
      bio_queue,
      FunctionHook("nvmet_file_execute_rw", "nvmet", "nvmet", "T2 (file namespaces)", false,
                   false, hint),
      TracepointHook("block", "block_rq_issue", "", "",
                     "T_DRIVE_ISSUE; T2 from the request (blk-mq disks with iostats on)", false),
      req_complete,
  };
}

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
      return {hook.name + (hook.on_return ? "_fexit" : "_fentry")};
    case AttachType::kKprobe:
      if (hook.on_return) return {hook.name + "_kprobe", hook.name + "_kretprobe"};
      return {hook.name + "_kprobe"};
  }
  return {};
}

}  // namespace ntprof::agent
