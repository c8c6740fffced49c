#include "report_html.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report_builder.h"
#include "report_text.h"
#include "slowest_commands.h"
#include "svg_chart.h"

namespace ntprof {
namespace {

constexpr std::string_view kStyle = R"CSS(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;margin:24px auto;max-width:1000px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 2px;border-top:1px solid #ddd;padding-top:16px}
h3{font-size:14px;margin:18px 0 6px;color:#444}
.meta,.context{color:#555;margin:2px 0}
.verdict{font-weight:600}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums;font-size:13px}
table.slowest{font-size:12px;width:100%}
table.slowest th,table.slowest td{padding:3px 4px}
table.slowest th{white-space:normal;vertical-align:bottom}
table.slowest td[data-k=start],table.slowest td.text{white-space:normal;overflow-wrap:anywhere}
th,td{padding:3px 7px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
td.text{text-align:left}
tr.total td{font-weight:600}
tr.component td:first-child{padding-left:26px;color:#444}
.swatch{display:inline-block;width:11px;height:11px;margin-right:6px;vertical-align:-1px;border-radius:2px}
ul.legend{list-style:none;padding:0;margin:2px 0 8px;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px}
svg text{font:12px system-ui,sans-serif;fill:#333}
svg text.in-bar{fill:#fff;font-weight:600}
svg.bars rect{stroke:#fff;stroke-width:1}
svg .grid{stroke:#e6e6e6}svg .frame{fill:none;stroke:#999}
.lines p{margin:2px 0;font-family:ui-monospace,monospace;font-size:12.5px;white-space:pre-wrap}
.scroll{overflow-x:auto}
.side-by-side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.side-by-side figure{margin:0}.side-by-side figcaption{font-weight:600;text-align:center}
.side-by-side svg{width:100%;height:auto}
)CSS";

double Us(double ns) { return ns / 1000.0; }
std::string Fixed(double us) { return absl::StrFormat("%.2f", us); }

bool IsTotal(Stage s) { return s == Stage::kEndToEnd || s == Stage::kTargetTotal; }

// A stage keeps its colour on every chart and page.
size_t ColorOf(Stage s) { return static_cast<size_t>(s); }

std::string Page(const std::string& title, const std::string& body) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                      "<title>",
                      EscapeHtml(title), "</title><style>", std::string(kStyle), "</style></head><body>\n",
                      body, "</body></html>\n");
}

std::string Cell(const std::string& key, const std::string& value) {
  return absl::StrCat("<td data-k=\"", key, "\">", EscapeHtml(value), "</td>");
}

std::string DistributionCells(const Distribution& d) {
  return absl::StrCat(Cell("n", absl::StrCat(d.n)), Cell("mean", Fixed(Us(d.mean_ns))),
                      Cell("p50", Fixed(Us(d.p50_ns))), Cell("p99", Fixed(Us(d.p99_ns))),
                      Cell("p99_9", Fixed(Us(d.p999_ns))), Cell("min", Fixed(Us(d.min_ns))),
                      Cell("max", Fixed(Us(d.max_ns))));
}

std::string Qd(const std::optional<double>& qd) { return qd ? absl::StrFormat("%.2f", *qd) : "-"; }

std::string Lines(const std::vector<std::string>& lines, const std::string& cls) {
  std::string html = absl::StrCat("<div class=\"lines ", cls, "\">");
  for (const std::string& line : lines) absl::StrAppend(&html, "<p>", EscapeHtml(line), "</p>");
  return html + "</div>";
}

std::string StageBars(const GroupReport& g, const HtmlOptions& options) {
  std::vector<StackedBar> bars;
  StackedBar stages{"stages", {}};
  std::vector<std::pair<std::string, size_t>> legend;
  for (const StageRow& row : g.stages) {
    if (IsTotal(row.stage)) continue;
    stages.segments.push_back({row.label, row.dist.mean_ns, ColorOf(row.stage)});
    legend.emplace_back(row.label, ColorOf(row.stage));
  }
  bars.push_back(std::move(stages));
  if (options.detail && !g.components.empty()) {
    StackedBar components{"components", {}};
    for (const StageRow& stage : g.stages) {
      for (const ComponentRow& c : g.components) {
        if (c.stage != stage.stage) continue;
        components.segments.push_back({absl::StrCat(stage.label, ": ", std::string(ComponentLabel(c.component))),
                                       c.dist.mean_ns, ColorOf(c.stage)});
      }
    }
    bars.push_back(std::move(components));
  }
  return StackedBarsSvg(bars, 1000.0, "us") + LegendHtml(legend);
}

std::string PercentileTable(const GroupReport& g, const HtmlOptions& options) {
  std::string html =
      "<table class=\"percentiles\"><tr><th>stage</th><th>n</th><th>mean us</th><th>p50 us</th>"
      "<th>p99 us</th><th>p99.9 us</th><th>min us</th><th>max us</th><th>share</th>"
      "<th>avg QD</th></tr>";
  for (const StageRow& row : g.stages) {
    absl::StrAppend(&html, "<tr data-stage=\"", std::string(StageId(row.stage)), "\"",
                    IsTotal(row.stage) ? " class=\"total\"" : "", "><td><span class=\"swatch\" "
                    "style=\"background:", std::string(ChartColor(ColorOf(row.stage))), "\"></span>",
                    EscapeHtml(row.label), "</td>", DistributionCells(row.dist),
                    Cell("share", absl::StrFormat("%.1f %%", row.share * 100)),
                    Cell("avg_qd", Qd(row.avg_qd)), "</tr>");
    if (!options.detail) continue;
    for (const ComponentRow& c : g.components) {
      if (c.stage != row.stage) continue;
      absl::StrAppend(&html, "<tr class=\"component\" data-component=\"", std::string(ComponentId(c.component)),
                      "\"><td>", EscapeHtml((ComponentLabel(c.component))), "</td>",
                      DistributionCells(c.dist), Cell("share", ""), Cell("avg_qd", Qd(c.avg_qd)),
                      "</tr>");
    }
  }
  return html + "</table>";
}

// The distribution's tail stretched: y = -log10(1 - q), so 90, 99, 99.9 are equally far apart.
double Tail(double q) { return -std::log10(1 - std::min(q, 99.99) / 100); }

// Each stage's cumulative distribution, as steps: between two of the percentiles drawn, the
// distribution holds the lower one (a line between them would draw latencies no command had).
std::vector<ChartSeries> DistributionSeries(const std::vector<StageRow>& rows) {
  std::vector<ChartSeries> series;
  for (const StageRow& row : rows) {
    if (row.curve_ns.size() != kCurveQuantiles.size()) continue;
    ChartSeries s{row.label, ColorOf(row.stage), false, true, {}};
    for (size_t i = 0; i < kCurveQuantiles.size(); ++i) {
      if (kCurveQuantiles[i] >= 100) continue;  // the maximum is in the table
      s.points.emplace_back(Us(row.curve_ns[i]), Tail(kCurveQuantiles[i]));
    }
    series.push_back(std::move(s));
  }
  return series;
}

// latency_us: values the latency axis must span (two runs drawn side by side share it).
std::string DistributionSvg(const std::vector<ChartSeries>& series, std::vector<double> latency_us) {
  ChartAxis x{"latency (us, log scale)", true, {}, std::move(latency_us)};
  ChartAxis y{"percentile", false,
              {{0, ""}, {Tail(50), "50"}, {Tail(90), "90"}, {Tail(99), "99"}, {Tail(99.9), "99.9"},
               {Tail(99.99), "99.99"}}, {}};
  return LineChartSvg(series, x, y);
}

constexpr char kDistributionHeading[] =
    "<h3>Latency distribution (cumulative; each stage and end to end)</h3>";

std::string DistributionChart(const GroupReport& g) {
  const std::vector<ChartSeries> series = DistributionSeries(g.stages);
  if (series.empty()) return "";
  return absl::StrCat(kDistributionHeading, DistributionSvg(series, {}));
}

std::string TimelineChart(const GroupReport& g) {
  if (g.timeline.empty()) return "";
  std::vector<ChartSeries> series;
  Stage total = Stage::kEndToEnd;
  for (const StageRow& row : g.stages) {
    if (IsTotal(row.stage)) total = row.stage;
    ChartSeries s{absl::StrCat(row.label, " (mean)"), ColorOf(row.stage), false, false, {}};
    for (const TimelineBin& bin : g.timeline) {
      if (auto mean = bin.mean_ns[static_cast<size_t>(row.stage)]) {
        s.points.emplace_back(bin.start_s + g.timeline_bin_s / 2, Us(*mean));
      }
    }
    series.push_back(std::move(s));
  }
  ChartSeries slowest{"slowest command in the interval", ColorOf(total), true, false, {}};
  for (const TimelineBin& bin : g.timeline) {
    if (bin.max_ns > 0) slowest.points.emplace_back(bin.start_s + g.timeline_bin_s / 2, Us(bin.max_ns));
  }
  series.push_back(std::move(slowest));
  return absl::StrCat(
      "<h3>Stage latency over time</h3><p class=\"context\">",
      absl::StrFormat("mean of each stage per %.3g s interval; dashed: the interval's slowest "
                      "command. Seconds since the first command (approximate wall clock).",
                      g.timeline_bin_s),
      "</p>", LineChartSvg(series, ChartAxis{"seconds", false, {}, {}}, ChartAxis{"us (log scale)", true, {}, {}}));
}

std::string GroupSection(const GroupReport& g, const Report& report, const HtmlOptions& options) {
  std::string html = absl::StrCat("<section class=\"group\" data-group=\"", EscapeHtml(g.name),
                                  "\"><h2>", EscapeHtml(g.name), "</h2><p class=\"context\">",
                                  EscapeHtml(GroupContext(g, report)), "</p>");
  absl::StrAppend(&html, "<p class=\"latency\">latency (us): mean <b data-k=\"mean\">",
                  Fixed(Us(g.latency.mean_ns)), "</b> &nbsp;p50 <b data-k=\"p50\">",
                  Fixed(Us(g.latency.p50_ns)), "</b> &nbsp;p99 <b data-k=\"p99\">",
                  Fixed(Us(g.latency.p99_ns)), "</b> &nbsp;p99.9 <b data-k=\"p99_9\">",
                  Fixed(Us(g.latency.p999_ns)), "</b></p>");
  if (g.throughput) {
    absl::StrAppend(&html, "<p class=\"context\">", EscapeHtml(ThroughputLine(*g.throughput, report.rates)),
                    "</p>");
  }
  absl::StrAppend(&html, "<h3>Where the time went (mean per stage", options.detail ? ", and components" : "",
                  ")</h3>", StageBars(g, options));
  const std::string largest = LargestLine(g);
  if (!largest.empty()) absl::StrAppend(&html, "<p class=\"verdict\">", EscapeHtml(largest), "</p>");
  absl::StrAppend(&html, "<h3>Percentiles</h3><div class=\"scroll\">", PercentileTable(g, options),
                  "</div>");
  if (!g.missing_components.empty()) {
    absl::StrAppend(&html, Lines(g.missing_components, "missing"));
  }
  absl::StrAppend(&html, DistributionChart(g), TimelineChart(g), "</section>\n");
  return html;
}

std::string SlowestSection(const Report& report) {
  const std::vector<Stage> columns = SlowestColumns(report);
  const Stage total = SlowestTotal(report);
  std::string html = absl::StrCat("<section id=\"slowest\"><h2>Slowest commands</h2><p class=\"context\">",
                                  EscapeHtml(SlowestHeading(report)),
                                  "</p><div class=\"scroll\"><table class=\"slowest\"><tr><th>start "
                                  "(UTC)</th><th>host</th><th>target</th><th>qid</th><th>cid</th>"
                                  "<th>op</th><th>LBA</th><th>bytes</th><th>",
                                  EscapeHtml(StageLabel(total, v1::STACK_KERNEL, v1::STACK_KERNEL)),
                                  " us</th>");
  for (Stage s : columns) {
    absl::StrAppend(&html, "<th>", EscapeHtml(StageLabel(s, v1::STACK_KERNEL, v1::STACK_KERNEL)), " us</th>");
  }
  absl::StrAppend(&html, "<th>group</th></tr>");
  for (const SlowCommand& c : report.slowest) {
    absl::StrAppend(&html, "<tr>", Cell("start", c.wall_ns ? WallTimeText(*c.wall_ns) : "-"),
                    Cell("host", c.host_agent.empty() ? "-" : c.host_agent),
                    Cell("target", c.target_agent.empty() ? "-" : c.target_agent),
                    Cell("qid", absl::StrCat(c.qid)), Cell("cid", absl::StrCat(c.cid)),
                    Cell("op", OpName(c.opcode)), Cell("slba", absl::StrCat(c.slba)),
                    Cell("bytes", absl::StrCat(c.bytes)),
                    Cell(std::string(StageId(total)), Fixed(Us(c.latency_ns))));
    for (Stage s : columns) {
      const auto& v = c.stages[static_cast<size_t>(s)];
      absl::StrAppend(&html, Cell(std::string(StageId(s)), v ? Fixed(Us(*v)) : "-"));
    }
    absl::StrAppend(&html, "<td class=\"text\">", EscapeHtml(c.group), "</td></tr>");
  }
  return html + "</table></div></section>\n";
}

const StageRow* RowOf(const std::vector<StageRow>& rows, Stage s) {
  for (const StageRow& row : rows) {
    if (row.stage == s) return &row;
  }
  return nullptr;
}

// Each stage's percentiles in both runs, next to each other; "-" where a run lacks the stage.
std::string PercentilesSideBySide(const GroupComparison& g, const std::string& base_head,
                                  const std::string& new_head) {
  struct Column {
    const char* key;
    const char* head;
    int64_t Distribution::*value;
  };
  static constexpr Column kColumns[] = {{"p50", "p50 us", &Distribution::p50_ns},
                                        {"p99", "p99 us", &Distribution::p99_ns},
                                        {"p99_9", "p99.9 us", &Distribution::p999_ns},
                                        {"max", "max us", &Distribution::max_ns}};
  std::string html = "<table class=\"percentiles-compared\"><tr><th rowspan=\"2\">stage</th>";
  for (const Column& c : kColumns) absl::StrAppend(&html, "<th colspan=\"2\">", c.head, "</th>");
  html += "</tr><tr>";
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    absl::StrAppend(&html, "<th>", EscapeHtml(base_head), "</th><th>", EscapeHtml(new_head), "</th>");
  }
  html += "</tr>";
  for (const auto* list : {&g.stages, &g.base_only, &g.new_only}) {
    for (const StageDelta& d : *list) {
      const StageRow* base = RowOf(g.base_rows, d.stage);
      const StageRow* next = RowOf(g.new_rows, d.stage);
      absl::StrAppend(&html, "<tr data-stage=\"", std::string(StageId(d.stage)), "\"",
                      IsTotal(d.stage) ? " class=\"total\"" : "", "><td>", EscapeHtml(d.label),
                      "</td>");
      for (const Column& c : kColumns) {
        for (const auto& [side, row] : {std::pair{"base", base}, std::pair{"new", next}}) {
          absl::StrAppend(&html, Cell(absl::StrCat(c.key, "_", side),
                                      row ? Fixed(Us(row->dist.*c.value)) : "-"));
        }
      }
      html += "</tr>";
    }
  }
  return html + "</table>";
}

// Both runs' distributions next to each other, on one latency scale.
std::string DistributionsSideBySide(const GroupComparison& g, const std::string& base_head,
                                    const std::string& new_head) {
  const std::vector<ChartSeries> base = DistributionSeries(g.base_rows);
  const std::vector<ChartSeries> next = DistributionSeries(g.new_rows);
  if (base.empty() && next.empty()) return "";
  std::vector<double> span;
  for (const auto* run : {&base, &next}) {
    for (const ChartSeries& s : *run) {
      for (const auto& [latency_us, q] : s.points) span.push_back(latency_us);
    }
  }
  const auto [lo, hi] = std::minmax_element(span.begin(), span.end());
  const std::vector<double> shared = {*lo, *hi};
  return absl::StrCat(kDistributionHeading, "<div class=\"side-by-side\"><figure><figcaption>",
                      EscapeHtml(base_head), "</figcaption>", DistributionSvg(base, shared),
                      "</figure><figure><figcaption>", EscapeHtml(new_head), "</figcaption>",
                      DistributionSvg(next, shared), "</figure></div>");
}

}  // namespace

std::string RenderHtml(const Report& report, HtmlOptions options) {
  std::string body = absl::StrCat("<h1>ntprof report</h1><p class=\"meta\">",
                                  EscapeHtml(report.title), " &middot; ",
                                  EscapeHtml(report.transport));
  if (report.sample_rate > 0) absl::StrAppend(&body, " &middot; 1 in ", report.sample_rate, " sampled");
  absl::StrAppend(&body, absl::StrFormat(" &middot; %.1f s recorded</p>\n", report.span_s));
  for (const GroupReport& g : report.groups) absl::StrAppend(&body, GroupSection(g, report, options));
  if (report.groups.empty()) body += "<p>no complete sampled commands</p>";
  if (report.slowest_asked > 0) absl::StrAppend(&body, SlowestSection(report));
  absl::StrAppend(&body, "<section id=\"records\"><h2>Records, losses and notes</h2>",
                  Lines(RecordLines(report), "records"), "</section>\n");
  return Page(absl::StrCat("ntprof report: ", report.title), body);
}

std::string RenderHtml(const Comparison& c) {
  const bool same_transport = c.base_transport == c.new_transport;
  const std::string base_head = same_transport ? "base" : c.base_transport;
  const std::string new_head = same_transport ? "new" : c.new_transport;
  std::string body = absl::StrCat(
      "<h1>ntprof comparison</h1><p class=\"meta\">base: ", EscapeHtml(c.base_title), " (",
      EscapeHtml(c.base_transport), ")<br>new: ", EscapeHtml(c.new_title), " (",
      EscapeHtml(c.new_transport), ")</p>\n");
  for (const GroupComparison& g : c.groups) {
    absl::StrAppend(&body, "<section class=\"group\" data-group=\"", EscapeHtml(g.name), "\"><h2>",
                    EscapeHtml(g.name), "</h2>");
    // Both runs' stages on one scale; a stage only one run has is drawn in its bar alone.
    StackedBar base{base_head, {}}, next{new_head, {}};
    std::vector<std::pair<std::string, size_t>> legend;
    for (const auto* list : {&g.stages, &g.base_only, &g.new_only}) {
      for (const StageDelta& d : *list) {
        if (IsTotal(d.stage)) continue;
        if (d.base_mean_ns) base.segments.push_back({d.label, *d.base_mean_ns, ColorOf(d.stage)});
        if (d.new_mean_ns) next.segments.push_back({d.label, *d.new_mean_ns, ColorOf(d.stage)});
        legend.emplace_back(d.label, ColorOf(d.stage));
      }
    }
    absl::StrAppend(&body, "<h3>Where the time went (mean per stage)</h3>",
                    StackedBarsSvg({base, next}, 1000.0, "us"), LegendHtml(legend));
    for (const std::string& line : VerdictLines(g)) {
      absl::StrAppend(&body, "<p class=\"verdict\">", EscapeHtml(line), "</p>");
    }
    absl::StrAppend(&body, "<table class=\"comparison\"><tr><th>stage (mean us)</th><th>",
                    EscapeHtml(base_head), "</th><th>", EscapeHtml(new_head),
                    "</th><th>diff</th><th>ratio</th></tr>");
    for (const StageDelta& d : g.stages) {
      const std::string diff = absl::StrFormat("%+.2f", Us(*d.new_mean_ns - *d.base_mean_ns));
      const std::string ratio =
          *d.base_mean_ns > 0 ? absl::StrFormat("%.2fx", *d.new_mean_ns / *d.base_mean_ns) : "-";
      absl::StrAppend(&body, "<tr data-stage=\"", std::string(StageId(d.stage)), "\"",
                      IsTotal(d.stage) ? " class=\"total\"" : "", "><td>", EscapeHtml(d.label),
                      "</td>", Cell("base", Fixed(Us(*d.base_mean_ns))),
                      Cell("new", Fixed(Us(*d.new_mean_ns))), Cell("diff", diff),
                      Cell("ratio", ratio), "</tr>");
    }
    if (g.latency_compared) {
      absl::StrAppend(&body, "<tr data-stage=\"p99\"><td>p99 latency</td>",
                      Cell("base", Fixed(Us(g.base_latency.p99_ns))),
                      Cell("new", Fixed(Us(g.new_latency.p99_ns))),
                      Cell("diff", absl::StrFormat("%+.2f", Us(g.new_latency.p99_ns - g.base_latency.p99_ns))),
                      Cell("ratio", ""), "</tr>");
    }
    absl::StrAppend(&body, "</table><h3>Percentiles</h3><div class=\"scroll\">",
                    PercentilesSideBySide(g, base_head, new_head), "</div>",
                    DistributionsSideBySide(g, base_head, new_head), "</section>\n");
  }
  std::vector<std::string> notes;
  for (const std::string& u : c.unmatched_groups) notes.push_back(absl::StrCat("note: ", u));
  if (!notes.empty()) absl::StrAppend(&body, "<section id=\"notes\">", Lines(notes, "notes"), "</section>");
  return Page("ntprof comparison", body);
}

}  // namespace ntprof
