// The regression gate's result as JUnit XML, which CI systems (Jenkins, GitLab, GitHub's test
// reporters) show as test results: one test case per bound, failed when the bound was crossed in
// any group, an error when no group could decide it; the figures are in the message.
#pragma once

#include <string>

#include "regression_gate.h"

namespace ntprof {

std::string ToJUnit(const GateResult& result);

}  // namespace ntprof
