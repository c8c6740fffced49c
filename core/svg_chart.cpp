#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ntprof {
namespace {

constexpr double kWidth = 760;
constexpr double kLeft = 70;     // room for the y tick labels
constexpr double kRight = 32;    // half a wide x tick label
constexpr double kTop = 12;
constexpr double kBottom = 44;   // x tick labels and the axis title
constexpr double kPlotHeight = 220;

// Trims "%.6g" noise: 1000, 2.5, 0.01.
std::string Number(double v) {
  return std::abs(v) >= 1 && v == std::floor(v) ? absl::StrFormat("%.0f", v) : absl::StrFormat("%g", v);
}

constexpr double kFloorPx = 16;  // a log axis's floor, where values <= 0 are drawn
constexpr double kLogPad = 0.06;  // of a log axis's span, left below its smallest value and above

// The values an axis shows. A log axis keeps its positive ones apart: the others go to its floor.
struct AxisValues {
  double lo = INFINITY, hi = -INFINITY;
  bool floor = false;     // a log axis has values <= 0
  bool negative = false;  // ... some of them below 0
  void Add(double v, bool log) {
    if (!std::isfinite(v)) return;
    if (log && v <= 0) {
      floor = true;
      negative |= v < 0;
      return;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

struct Scale {
  double lo, hi;    // the axis's range (a log axis: its positive part)
  bool log;
  double from, to;  // pixels
  bool floor = false;
  double operator()(double v) const {
    if (log && v <= 0) return from;
    const double start = floor ? from + (to > from ? kFloorPx : -kFloorPx) : from;
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(v) : v;
    return b == a ? (start + to) / 2 : start + (x - a) / (b - a) * (to - start);
  }
};

// 1, 2, 5 x 10^k steps giving about six ticks.
std::vector<std::pair<double, std::string>> LinearTicks(double lo, double hi) {
  std::vector<std::pair<double, std::string>> ticks;
  const double span = hi - lo;
  if (!(span > 0)) return {{lo, Number(lo)}};
  const double raw = span / 6;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    ticks.emplace_back(v, Number(std::abs(v) < step * 1e-9 ? 0 : v));
  }
  return ticks;
}

// Decades; with 2 and 5, then every digit, when the range holds too few of them to read it by.
std::vector<std::pair<double, std::string>> LogTicks(double lo, double hi) {
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<std::pair<double, std::string>> ticks;
  for (const std::vector<double>& multiples : std::vector<std::vector<double>>{
           {1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    ticks.clear();
    for (int e = first; e <= last; ++e) {
      for (double m : multiples) {
        const double v = m * std::pow(10, e);
        if (v >= lo && v <= hi) ticks.emplace_back(v, Number(v));
      }
    }
    if (ticks.size() >= 3) break;
  }
  if (ticks.size() < 2) {
    ticks = {{lo, absl::StrFormat("%.3g", lo)}, {hi, absl::StrFormat("%.3g", hi)}};
  }
  return ticks;
}

// The range a log axis shows: the data's, padded on both sides so that neither end sits on the
// frame (a decade around a single value).
std::pair<double, double> LogRange(double lo, double hi) {
  const double a = std::log10(lo), b = std::log10(hi);
  const double pad = b > a ? (b - a) * kLogPad : 0.5;
  return {std::pow(10, a - pad), std::pow(10, b + pad)};
}

// The scale of one axis over `values` (the data and the axis's includes).
Scale ScaleOf(const ChartAxis& axis, AxisValues values, bool from_zero, double from, double to) {
  for (double v : axis.include) values.Add(v, axis.log);
  double lo = values.lo, hi = values.hi;
  if (!axis.ticks.empty()) {
    lo = std::min(lo, axis.ticks.front().first);
    hi = std::max(hi, axis.ticks.back().first);
  } else if (axis.log) {
    if (!(lo <= hi)) lo = hi = 1;  // only values on the floor
    std::tie(lo, hi) = LogRange(lo, hi);
  } else {
    if (lo > 0 && from_zero) lo = 0;  // linear values from zero, so heights compare
    if (hi == lo) hi = lo + 1;
  }
  return Scale{lo, hi, axis.log, from, to, axis.log && values.floor};
}

std::vector<std::pair<double, std::string>> TicksOf(const ChartAxis& axis, const Scale& scale,
                                                     bool negative) {
  std::vector<std::pair<double, std::string>> ticks = !axis.ticks.empty() ? axis.ticks
                                                      : axis.log ? LogTicks(scale.lo, scale.hi)
                                                                 : LinearTicks(scale.lo, scale.hi);
  if (scale.floor) ticks.insert(ticks.begin(), {0.0, negative ? "\u2264" "0" : "0"});
  return ticks;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view ChartColor(size_t index) {
  // Distinguishable for the common colour-vision deficiencies (Okabe-Ito, then greys).
  static constexpr std::string_view kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                  "#D55E00", "#56B4E9", "#F0E442", "#000000",
                                                  "#999999", "#7f3c8d", "#11a579"};
  return kPalette[index % std::size(kPalette)];
}

std::string StackedBarsSvg(const std::vector<StackedBar>& bars, double divisor,
                           std::string_view unit) {
  constexpr double kBarHeight = 26;
  constexpr double kGap = 10;
  constexpr double kLabel = 90;
  const double plot = kWidth - kLabel - kRight - 80;  // room for the total after the bar
  double longest = 0;
  for (const StackedBar& bar : bars) {
    double total = 0;
    for (const BarSegment& s : bar.segments) total += std::max(0.0, s.value);
    longest = std::max(longest, total);
  }
  const double height = bars.size() * (kBarHeight + kGap) + kGap;
  std::string svg = absl::StrFormat(
      "<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
      "width=\"%.0f\" height=\"%.0f\" role=\"img\">",
      kWidth, height, kWidth, height);
  double y = kGap;
  for (const StackedBar& bar : bars) {
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
                                          "dominant-baseline=\"middle\">%s</text>",
                                          kLabel - 8, y + kBarHeight / 2, EscapeHtml(bar.label)));
    double x = kLabel;
    double total = 0;
    for (const BarSegment& s : bar.segments) {
      const double w = longest > 0 ? std::max(0.0, s.value) / longest * plot : 0;
      total += std::max(0.0, s.value);
      absl::StrAppend(&svg, absl::StrFormat(
                                "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" "
                                "fill=\"%s\"><title>%s: %.2f %s</title></rect>",
                                x, y, w, kBarHeight, ChartColor(s.color), EscapeHtml(s.label),
                                s.value / divisor, EscapeHtml(unit)));
      // A segment wide enough for its value gets it written inside.
      if (w > 48) {
        absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" "
                                              "dominant-baseline=\"middle\" class=\"in-bar\">%.2f</text>",
                                              x + w / 2, y + kBarHeight / 2, s.value / divisor));
      }
      x += w;
    }
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.2f\" y=\"%.1f\" dominant-baseline=\"middle\">"
                                          "%.2f %s</text>",
                                          x + 6, y + kBarHeight / 2, total / divisor,
                                          EscapeHtml(unit)));
    y += kBarHeight + kGap;
  }
  svg += "</svg>";
  return svg;
}

std::string LineChartSvg(const std::vector<ChartSeries>& series, const ChartAxis& x_axis,
                         const ChartAxis& y_axis) {
  AxisValues xs, ys;
  bool any = false;
  for (const ChartSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xs.Add(x, x_axis.log);
      ys.Add(y, y_axis.log);
      any = true;
    }
  }
  if (!any) return "<p class=\"empty\">no data to draw</p>";
  const double height = kTop + kPlotHeight + kBottom;
  const Scale sx = ScaleOf(x_axis, xs, false, kLeft, kWidth - kRight);
  const Scale sy = ScaleOf(y_axis, ys, true, kTop + kPlotHeight, kTop);
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
      "width=\"%.0f\" height=\"%.0f\" role=\"img\">",
      kWidth, height, kWidth, height);
  const auto x_ticks = TicksOf(x_axis, sx, xs.negative);
  const auto y_ticks = TicksOf(y_axis, sy, ys.negative);
  for (const auto& [v, label] : x_ticks) {
    const double px = sx(v);
    absl::StrAppend(&svg, absl::StrFormat(
                              "<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
                              "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>",
                              px, kTop, px, kTop + kPlotHeight, px, kTop + kPlotHeight + 16,
                              EscapeHtml(label)));
  }
  for (const auto& [v, label] : y_ticks) {
    const double py = sy(v);
    absl::StrAppend(&svg, absl::StrFormat(
                              "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>"
                              "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
                              "dominant-baseline=\"middle\">%s</text>",
                              kLeft, py, kWidth - kRight, py, kLeft - 6, py, EscapeHtml(label)));
  }
  absl::StrAppend(&svg, absl::StrFormat(
                            "<rect class=\"frame\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
                            "height=\"%.0f\"/>",
                            kLeft, kTop, kWidth - kRight - kLeft, kPlotHeight));
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>",
                                        (kLeft + kWidth - kRight) / 2, height - 6,
                                        EscapeHtml(x_axis.title)));
  absl::StrAppend(&svg, absl::StrFormat("<text transform=\"translate(14 %.0f) rotate(-90)\" "
                                        "text-anchor=\"middle\">%s</text>",
                                        kTop + kPlotHeight / 2, EscapeHtml(y_axis.title)));
  for (const ChartSeries& s : series) {
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (path.empty()) {
        path = absl::StrFormat("M%.1f %.1f", sx(x), sy(y));
      } else if (s.steps) {
        absl::StrAppend(&path, absl::StrFormat(" H%.1f V%.1f", sx(x), sy(y)));
      } else {
        absl::StrAppend(&path, absl::StrFormat(" L%.1f %.1f", sx(x), sy(y)));
      }
    }
    if (path.empty()) continue;
    absl::StrAppend(&svg, absl::StrFormat(
                              "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s>"
                              "<title>%s</title></path>",
                              path, ChartColor(s.color),
                              s.dashed ? " stroke-dasharray=\"5 4\"" : "", EscapeHtml(s.label)));
    if (s.points.size() == 1) {  // one point draws no line: mark it
      absl::StrAppend(&svg, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
                                            sx(s.points[0].first), sy(s.points[0].second),
                                            ChartColor(s.color)));
    }
  }
  svg += "</svg>";
  return svg;
}

std::string LegendHtml(const std::vector<std::pair<std::string, size_t>>& entries) {
  std::string html = "<ul class=\"legend\">";
  for (const auto& [label, color] : entries) {
    absl::StrAppend(&html, "<li><span class=\"swatch\" style=\"background:",
                    std::string(ChartColor(color)), "\"></span>", EscapeHtml(label),
                    "</li>");
  }
  html += "</ul>";
  return html;
}

}  // namespace ntprof
