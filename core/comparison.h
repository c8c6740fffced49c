// BASE vs NEW: which stage's mean grew most, every stage side by side.
#pragma once

#include "report.h"

namespace ntprof {

Comparison Compare(const Report& base, const Report& next);

}  // namespace ntprof
