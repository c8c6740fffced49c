// Reports and comparisons as one self-contained HTML page (inline CSS and SVG, no script, nothing
// fetched): the same Report the text and JSON renderers print, drawn. Charts need the builder's
// ReportExtras::charts; the slowest commands table needs ReportExtras::slowest.
#pragma once

#include <string>

#include "report.h"

namespace ntprof {

struct HtmlOptions {
  bool detail = false;  // components under each stage, as in the text report's --detail
};

std::string RenderHtml(const Report& report, HtmlOptions options = {});
std::string RenderHtml(const Comparison& comparison);

}  // namespace ntprof
