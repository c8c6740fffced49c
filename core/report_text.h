// Plain-text reports and comparisons in the layout storage engineers read (docs/usage.md).
#pragma once

#include <string>

#include "report.h"

namespace ntprof {

struct TextOptions {
  bool detail = false;  // components under each stage
};

std::string RenderText(const Report& report, TextOptions options = {});
std::string RenderText(const Comparison& comparison);

}  // namespace ntprof
