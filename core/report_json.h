// Reports and comparisons as JSON, with the stable stage and component ids of docs/design.md,
// "Stage model".
#pragma once

#include <nlohmann/json.hpp>

#include "report.h"

namespace ntprof {

nlohmann::json ToJson(const Report& report);
nlohmann::json ToJson(const Comparison& comparison);

}  // namespace ntprof
