#include "hook_decisions.h"

namespace ntprof::agent {

void ToHookDecisions(const HookPlan& plan,
                     google::protobuf::RepeatedPtrField<v1::HookDecision>* out) {
  for (const HookDecision& d : plan.hooks()) {
    v1::HookDecision* h = out->Add();
    h->set_hook(d.hook.name);
    h->set_required(d.hook.required);
    if (const VariantVerdict* v = d.chosen_variant()) {
      h->set_available(true);
      h->set_attach(AttachTypeName(v->type, d.hook.on_return));
      h->set_component(d.hook.stamps);
    } else {
      h->set_reason(d.unavailable_reason());
    }
  }
}

}  // namespace ntprof::agent
