// HookPlan: per hook, which attach variant this kernel gets and why each other one is unavailable.
// Decided before load from KernelFacts (PlanHooks), then corrected by what load and attach really
// did (MarkFailed): the `probe` command prints it, `record` follows it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hook_catalog.h"
#include "kernel_facts.h"
#include "transports.h"

namespace ntprof::agent {

struct VariantVerdict {
  AttachType type;
  std::vector<std::string> programs;
  bool available = false;
  std::string reason;  // why not, when !available
};

struct HookDecision {
  HookSpec hook;
  std::vector<VariantVerdict> variants;  // the hook's candidates, preferred first
  std::optional<size_t> chosen;          // index into variants

  const VariantVerdict* chosen_variant() const {
    return chosen ? &variants[*chosen] : nullptr;
  }
  // Why no variant is usable: the first candidate's reason (the others usually repeat it).
  std::string unavailable_reason() const;
};

struct PlanInputs {
  bool external_btf = false;  // --btf FILE given: module types can come from it
  std::string prefer_attach;  // testing aid: "kprobe", "raw_tp", ... tried first
};

class HookPlan {
 public:
  HookPlan(Role role, v1::Transport transport, std::vector<HookDecision> hooks)
      : role_(role), transport_(transport), hooks_(std::move(hooks)) {
    for (HookDecision& d : hooks_) Choose(d);
  }

  Role role() const { return role_; }
  v1::Transport transport() const { return transport_; }
  const std::vector<HookDecision>& hooks() const { return hooks_; }

  // OK when every required hook has a variant; else names the first one missing and what to do.
  absl::Status CheckRequired() const;
  // Programs of the chosen variants: the ones to load and attach; every other one is disabled.
  std::vector<std::string> ChosenPrograms() const;
  // "hook (stamps)" of optional hooks with no variant: their components are absent.
  std::vector<std::string> MissingOptional() const;
  // Load or attach of `program` failed: its variant is unavailable for `reason`, the next
  // candidate of its hook is chosen. False if no hook has that program.
  bool MarkFailed(const std::string& program, const std::string& reason);

  std::string ToText() const;
  std::string ToJson() const;

 private:
  void Choose(HookDecision& d);

  Role role_;
  v1::Transport transport_;
  std::vector<HookDecision> hooks_;
};

// Decide every hook of (role, transport) against the kernel's facts.
HookPlan PlanHooks(Role role, v1::Transport transport, const KernelFacts& facts,
                   const PlanInputs& inputs);

// The roles this kernel could record in, over any transport that offers the role (the registry's
// rows): those with every required hook available.
std::vector<Role> RolesPossible(const KernelFacts& facts, const PlanInputs& inputs);

// Why `type` cannot attach `hook` here, or "" if nothing we can check stops it.
std::string WhyUnavailable(const HookSpec& hook, AttachType type, const KernelFacts& facts,
                           const PlanInputs& inputs);

}  // namespace ntprof::agent
