#include "hook_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_join.h"

namespace ntprof::agent {
namespace {

std::string ModuleName(const std::string& module) { return module.empty() ? "vmlinux" : module; }

bool IsModuleMissing(const std::string& reason) {
  return reason.rfind("module ", 0) == 0 && reason.find("not loaded") != std::string::npos;
}

// Reasons that hold for every variant: the module is absent or its types cannot be read.
std::string WhyModulesUnusable(const HookSpec& hook, const KernelFacts& facts,
                               const PlanInputs& inputs) {
  if (!facts.ModuleLoaded(hook.module)) return "module " + hook.module + " not loaded";
  if (!hook.types_module.empty()) {
    if (!facts.ModuleLoaded(hook.types_module)) return "module " + hook.types_module + " not loaded";
    if (!facts.HasBtf(hook.types_module) && !inputs.external_btf) {
      return "module " + hook.types_module + " has no BTF (/sys/kernel/btf/" + hook.types_module +
             " missing) and no --btf FILE with its types was given";
    }
  }
  return "";
}

std::string WhyFunctionAbsent(const HookSpec& hook, const KernelFacts& facts) {
  std::string why;
  if (facts.FunctionInKallsyms(hook.name)) {
    why = hook.name + "() is in kallsyms but not traceable (notrace, or only a compiler clone)";
  } else {
    why = hook.name + "() not in kallsyms (inlined, renamed or absent on this kernel)";
  }
  if (!hook.absent_hint.empty()) why += "; " + hook.absent_hint;
  return why;
}

}  // namespace

std::string WhyUnavailable(const HookSpec& hook, AttachType type, const KernelFacts& facts,
                           const PlanInputs& inputs) {
  if (std::string why = WhyModulesUnusable(hook, facts, inputs); !why.empty()) return why;
  switch (type) {
    case AttachType::kTpBtf:
    case AttachType::kRawTp:
      if (!hook.is_tracepoint()) return "not a tracepoint";
      if (!facts.TracepointExists(hook.tp_category, hook.name))
        return "tracepoint " + hook.tp_category + ":" + hook.name + " not present";
      if (type == AttachType::kTpBtf && !facts.TracepointInBtf(hook.module, hook.name))
        return "no BTF for tracepoint " + hook.name + " in " + ModuleName(hook.module);
      return "";
    case AttachType::kFentry: {
      Support s = facts.Fentry();
      if (!s.ok) return s.why;
      if (!facts.HasBtf(hook.module)) return "no BTF for " + ModuleName(hook.module);
      if (!facts.FunctionInBtf(hook.module, hook.name)) {
        if (!facts.FunctionTraceable(hook.name)) return WhyFunctionAbsent(hook, facts);
        return hook.name + "() not in the BTF of " + ModuleName(hook.module) +
               " (only a compiler clone exists)";
      }
      return "";
    }
    case AttachType::kKprobe: {
      Support s = facts.Kprobes();
      if (!s.ok) return s.why;
      if (!facts.FunctionTraceable(hook.name)) return WhyFunctionAbsent(hook, facts);
      return "";
    }
  }
  return "unknown attach type";
}

std::string HookDecision::unavailable_reason() const {
  if (variants.empty()) return "no attach variant";
  const std::string& first = variants.front().reason;
  bool same = std::all_of(variants.begin(), variants.end(),
                          [&](const VariantVerdict& v) { return v.reason == first; });
  if (same) return first;
  std::string out;
  for (const auto& v : variants) {
    if (!out.empty()) out += "; ";
    out += AttachTypeName(v.type, hook.on_return) + ": " + v.reason;
  }
  return out;
}

HookPlan PlanHooks(Role role, v1::Transport transport, const KernelFacts& facts,
                   const PlanInputs& inputs) {
  std::vector<HookDecision> decisions;
  for (HookSpec& hook : HooksFor(role, transport)) {
    HookDecision d;
    d.hook = hook;
    std::vector<AttachType> order = hook.variants;
    // The testing preference moves one type to the front, keeping the others as fallbacks.
    auto preferred = std::find_if(order.begin(), order.end(), [&](AttachType t) {
      return AttachTypeName(t, false) == inputs.prefer_attach ||
             AttachTypeName(t, true) == inputs.prefer_attach;
    });
    if (preferred != order.end()) std::rotate(order.begin(), preferred, preferred + 1);
    for (AttachType t : order) {
      VariantVerdict v{t, VariantPrograms(hook, t)};
      v.reason = WhyUnavailable(hook, t, facts, inputs);
      v.available = v.reason.empty();
      d.variants.push_back(std::move(v));
    }
    decisions.push_back(std::move(d));
  }
  HookPlan plan(role, transport, std::move(decisions));
  return plan;
}

void HookPlan::Choose(HookDecision& d) {
  d.chosen.reset();
  for (size_t i = 0; i < d.variants.size(); ++i) {
    if (d.variants[i].available) {
      d.chosen = i;
      return;
    }
  }
}

absl::Status HookPlan::CheckRequired() const {
  for (const HookDecision& d : hooks_) {
    if (!d.hook.required || d.chosen) continue;
    std::string reason = d.unavailable_reason();
    std::string msg = "cannot attach " + d.hook.name + " (" + d.hook.stamps + "): " + reason;
    if (IsModuleMissing(reason) && !d.hook.fix_hint.empty()) msg += "; " + d.hook.fix_hint;
    return absl::FailedPreconditionError(msg);
  }
  return absl::OkStatus();
}

std::vector<std::string> HookPlan::ChosenPrograms() const {
  std::vector<std::string> out;
  for (const HookDecision& d : hooks_) {
    if (const VariantVerdict* v = d.chosen_variant())
      out.insert(out.end(), v->programs.begin(), v->programs.end());
  }
  return out;
}

std::vector<std::string> HookPlan::MissingOptional() const {
  std::vector<std::string> out;
  for (const HookDecision& d : hooks_) {
    if (!d.hook.required && !d.chosen)
      out.push_back(d.hook.name + " (" + d.hook.stamps + ")");
  }
  return out;
}

bool HookPlan::MarkFailed(const std::string& program, const std::string& reason) {
  for (HookDecision& d : hooks_) {
    for (VariantVerdict& v : d.variants) {
      if (std::find(v.programs.begin(), v.programs.end(), program) == v.programs.end()) continue;
      v.available = false;
      v.reason = reason;
      Choose(d);
      return true;
    }
  }
  return false;
}

std::string HookPlan::ToText() const {
  std::ostringstream out;
  out << "hooks for role " << RoleName(role_) << ", transport " << TransportName(transport_)
      << ":\n";
  for (const HookDecision& d : hooks_) {
    const VariantVerdict* c = d.chosen_variant();
    std::string need = d.hook.required ? "required" : "optional";
    if (d.hook.on_demand) need += ", attached on demand";
    out << "  " << d.hook.name << "  [" << need << "]  "
        << d.hook.event() << "\n";
    out << "      provides: " << d.hook.stamps << "\n";
    out << "      attach:   "
        << (c ? AttachTypeName(c->type, d.hook.on_return) + " (" +
                    absl::StrJoin(c->programs, " + ") + ")"
              : std::string(d.hook.required ? "NONE - recording impossible" : "none - component absent"))
        << "\n";
    for (const VariantVerdict& v : d.variants) {
      if (v.available) continue;
      out << "      no " << AttachTypeName(v.type, d.hook.on_return) << ": " << v.reason << "\n";
    }
  }
  absl::Status ok = CheckRequired();
  out << (ok.ok() ? "result: every required hook can attach\n" : "result: " + std::string(ok.message()) + "\n");
  return out.str();
}

std::string HookPlan::ToJson() const {
  nlohmann::json hooks = nlohmann::json::array();
  for (const HookDecision& d : hooks_) {
    nlohmann::json variants = nlohmann::json::array();
    for (const VariantVerdict& v : d.variants) {
      nlohmann::json j = {{"attach", AttachTypeName(v.type, d.hook.on_return)},
                          {"programs", v.programs},
                          {"available", v.available}};
      if (!v.available) j["reason"] = v.reason;
      variants.push_back(j);
    }
    const VariantVerdict* c = d.chosen_variant();
    hooks.push_back({{"hook", d.hook.name},
                     {"event", d.hook.event()},
                     {"provides", d.hook.stamps},
                     {"required", d.hook.required},
                     {"on_demand", d.hook.on_demand},
                     {"chosen", c ? nlohmann::json(AttachTypeName(c->type, d.hook.on_return))
                                  : nlohmann::json(nullptr)},
                     {"variants", variants}});
  }
  absl::Status ok = CheckRequired();
  nlohmann::json out = {{"role", RoleName(role_)},
                        {"transport", TransportName(transport_)},
                        {"ready", ok.ok()},
                        {"hooks", hooks}};
  if (!ok.ok()) out["error"] = std::string(ok.message());
  return out.dump(2) + "\n";
}

std::vector<Role> RolesPossible(const KernelFacts& facts, const PlanInputs& inputs) {
  std::vector<Role> out;
  for (Role role : {Role::kHost, Role::kTarget}) {
    for (const TransportRow& row : Transports()) {
      if (!row.side(role).offered()) continue;
      if (PlanHooks(role, row.transport, facts, inputs).CheckRequired().ok()) {
        out.push_back(role);
        break;
      }
    }
  }
  return out;
}

}  // namespace ntprof::agent
