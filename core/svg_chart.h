// Hand-written inline SVG for the HTML report: stacked bars and line charts with linear or log
// axes. No script and nothing fetched: the page works offline and prints as it shows.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ntprof {

// Text and attribute values for HTML and SVG: & < > " ' escaped.
std::string EscapeHtml(std::string_view text);

// The palette: the same index gives the same colour on every chart of a page.
std::string_view ChartColor(size_t index);

struct BarSegment {
  std::string label;
  double value = 0;
  size_t color = 0;
};

struct StackedBar {
  std::string label;  // left of the bar ("base", "new", or the group)
  std::vector<BarSegment> segments;
};

// Horizontal bars on one scale (the longest total fills the width), each segment titled with its
// label and value (value / divisor, printed %.2f with unit).
std::string StackedBarsSvg(const std::vector<StackedBar>& bars, double divisor,
                           std::string_view unit);

struct ChartAxis {
  std::string title;
  bool log = false;
  // Fixed ticks (value, label); empty: chosen from the data (decades on a log axis).
  std::vector<std::pair<double, std::string>> ticks;
};

struct ChartSeries {
  std::string label;
  size_t color = 0;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y); points a log axis cannot show are left out
};

std::string LineChartSvg(const std::vector<ChartSeries>& series, const ChartAxis& x,
                         const ChartAxis& y);

// A legend of coloured swatches, as HTML.
std::string LegendHtml(const std::vector<std::pair<std::string, size_t>>& entries);

}  // namespace ntprof
