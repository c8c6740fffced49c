// The regression gate's result as JSON (`-o json`: the "gate" member of compare's and run's
// output). Changes are fractions of BASE (relative bounds) or nanoseconds (absolute), as "unit" says.
#pragma once

#include <nlohmann/json.hpp>

#include "regression_gate.h"

namespace ntprof {

nlohmann::json ToJson(const GateResult& result);

}  // namespace ntprof
