// The hook plan as the wire tells it (Agent.Probe and AgentHello.hooks).
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include "hook_plan.h"
#include "ntprof/v1/agent.pb.h"

namespace ntprof::agent {

void ToHookDecisions(const HookPlan& plan,
                     google::protobuf::RepeatedPtrField<v1::HookDecision>* out);

}  // namespace ntprof::agent
