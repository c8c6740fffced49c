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
  // Fixed ticks (value, label); empty: chosen from the data (1-2-5 steps, or 1, 2, 5 x 10^k on a
  // log axis).
  std::vector<std::pair<double, std::string>> ticks;
  // Values the axis spans besides the data: charts drawn side by side share their scales.
  std::vector<double> include;
};

// A log axis starts below its smallest value (never on the frame), and draws values <= 0 (a stage
// of 0 ns) on a floor below that, marked "0" ("<=0" when some are negative).
struct ChartSeries {
  std::string label;
  size_t color = 0;
  bool dashed = false;
  // Points joined by a horizontal then a vertical segment: a cumulative distribution, which holds
  // its value up to the next point (a straight line would draw values no command had).
  bool steps = false;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

std::string LineChartSvg(const std::vector<ChartSeries>& series, const ChartAxis& x,
                         const ChartAxis& y);

// A legend of coloured swatches, as HTML.
std::string LegendHtml(const std::vector<std::pair<std::string, size_t>>& entries);

}  // namespace ntprof
