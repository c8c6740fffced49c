// The charts draw what the numbers say: a cumulative distribution as steps, log axes with room
// below their smallest value, and values a log axis cannot place (0) on a floor of their own.
#include <catch2/catch.hpp>

#include <regex>

#include "svg_chart.h"

using namespace ntprof;

namespace {

// The plot's frame (svg_chart.cpp): left edge and bottom edge in pixels.
double FrameLeft(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<rect class="frame" x="([\d.]+)" y="([\d.]+)" width="[\d.]+" height="([\d.]+)")re")));
  return std::stod(m[1]);
}
double FrameBottom(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<rect class="frame" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)")re")));
  return std::stod(m[1]) + std::stod(m[2]);
}

// The first path's drawing commands.
std::string PathOf(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<path d="([^"]*)")re")));
  return m[1];
}

// The points a path visits, (x, y) in pixels, whatever its commands (M, L, H, V).
std::vector<std::pair<double, double>> Vertices(const std::string& path) {
  std::vector<std::pair<double, double>> out;
  std::regex command(R"(([MLHV])([-\d.]+)(?: ([-\d.]+))?)");
  double x = 0, y = 0;
  for (auto it = std::sregex_iterator(path.begin(), path.end(), command); it != std::sregex_iterator();
       ++it) {
    const std::string op = (*it)[1];
    if (op == "M" || op == "L") {
      x = std::stod((*it)[2]);
      y = std::stod((*it)[3]);
    } else if (op == "H") {
      x = std::stod((*it)[2]);
    } else {
      y = std::stod((*it)[2]);
    }
    out.emplace_back(x, y);
  }
  return out;
}

const ChartAxis kLinear{"y", false, {}, {}};
const ChartAxis kLog{"x", true, {}, {}};

}  // namespace

TEST_CASE("a_cumulative_distribution_is_drawn_as_steps", "[svg]") {
  // 50 % of the commands took <= 10 us, 90 % <= 20 us, all <= 80 us: between 10 and 20 us the
  // distribution stays at 50 % (no command there), so the line must go right at 50 %, then up.
  const ChartSeries cdf{"end to end", 0, false, true, {{10, 0.5}, {20, 0.9}, {80, 1.0}}};
  const std::string path = PathOf(LineChartSvg({cdf}, kLog, kLinear));
  CHECK(std::regex_match(path, std::regex(R"(M[\d.]+ [\d.]+( H[\d.]+ V[\d.]+){2})")));
  const auto v = Vertices(path);
  REQUIRE(v.size() == 5);
  // horizontal at the lower percentile to the next latency, then vertical to its percentile
  CHECK(v[1].second == v[0].second);
  CHECK(v[2].first == v[1].first);
  CHECK(v[2].second < v[1].second);  // up (SVG y grows downwards)
  CHECK(v[3].second == v[2].second);
  CHECK(v[4].first == v[3].first);
}

TEST_CASE("a_log_axis_starts_below_its_smallest_value", "[svg]") {
  // 1.0 us and 1.01 us are a decade's start: the axis used to begin there, on the frame.
  for (double smallest : {1.0, 1.01, 3.7}) {
    INFO("smallest " << smallest);
    const ChartSeries s{"stage", 0, false, false, {{smallest, 1}, {smallest * 40, 2}}};
    const std::string svg = LineChartSvg({s}, kLog, kLinear);
    const auto v = Vertices(PathOf(svg));
    REQUIRE(v.size() == 2);
    CHECK(v[0].first > FrameLeft(svg) + 5);
  }
}

TEST_CASE("zeros_on_a_log_axis_are_drawn_on_a_floor", "[svg]") {
  // A stage of 0 ns in some intervals: kept, on a floor below the smallest positive value.
  const ChartSeries s{"stage", 0, false, false, {{1, 0}, {2, 10}, {3, 100}}};
  const std::string svg = LineChartSvg({s}, kLinear, ChartAxis{"us", true, {}, {}});
  const auto v = Vertices(PathOf(svg));
  REQUIRE(v.size() == 3);
  CHECK(v[0].second == Approx(FrameBottom(svg)));
  CHECK(v[1].second < FrameBottom(svg) - 16);
  CHECK_THAT(svg, Catch::Contains(">0</text>"));
  // a negative value (a misplaced stamp) goes to the same floor, marked as such
  const ChartSeries negative{"stage", 0, false, false, {{1, -5}, {2, 10}}};
  CHECK_THAT(LineChartSvg({negative}, kLinear, ChartAxis{"us", true, {}, {}}),
             Catch::Contains(">\u22640</text>"));
}

TEST_CASE("charts_side_by_side_share_the_values_their_axis_includes", "[svg]") {
  const ChartSeries narrow{"a", 0, false, false, {{10, 1}, {20, 2}}};
  const ChartAxis shared{"x", true, {}, {1, 1000}};
  const auto alone = Vertices(PathOf(LineChartSvg({narrow}, kLog, kLinear)));
  const auto wide = Vertices(PathOf(LineChartSvg({narrow}, shared, kLinear)));
  // on the shared scale 10..20 us is a third of 1..1000 us, not the whole width
  CHECK(wide[1].first - wide[0].first < (alone[1].first - alone[0].first) / 3);
}
