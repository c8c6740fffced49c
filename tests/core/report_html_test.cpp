// The HTML page prints the numbers of the JSON report (one model, three renderers), escapes what
// recordings name, and fetches nothing.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "comparison.h"
#include "record_factory.h"
#include "recording_set.h"
#include "recording_writer.h"
#include "report_of.h"
#include "report_builder.h"
#include "report_html.h"
#include "report_json.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

// The tutorial's timings with storage spread over 7 values, so the percentiles differ more.
CommandTiming Varied(int i) {
  CommandTiming t = Tutorial(i);
  t.storage += static_cast<uint64_t>(i % 7) * 1000;
  return t;
}

Report ChartReport(const TempDir& dir, uint64_t extra_storage = 0) {
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"), RunSpec{.commands = 700},
           [&](int i) {
             CommandTiming t = Varied(i);
             t.storage += extra_storage;
             return t;
           });
  ReportOptions options;
  options.extras = ReportExtras{.slowest = 5, .charts = true};
  return ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}, options);
}

std::string Us(const nlohmann::json& v) { return absl::StrFormat("%.2f", v.get<double>()); }

// The cell of `key` in a table row of `stage` holds `value`.
bool RowHolds(const std::string& html, const std::string& stage, const std::string& key,
              const std::string& value) {
  const std::string row_start = absl::StrCat("<tr data-stage=\"", stage, "\"");
  for (size_t row = html.find(row_start); row != std::string::npos;
       row = html.find(row_start, row + 1)) {
    const size_t end = html.find("</tr>", row);
    const size_t cell = html.find(absl::StrCat("<td data-k=\"", key, "\">", value, "</td>"), row);
    if (cell != std::string::npos && cell < end) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("html_report_holds_the_numbers_of_the_json_report", "[html]") {
  TempDir dir;
  const Report report = ChartReport(dir);
  const std::string html = RenderHtml(report, HtmlOptions{.detail = true});
  const nlohmann::json j = ToJson(report);
  REQUIRE(j["groups"].size() == 1);
  for (const auto& g : j["groups"]) {
    CHECK_THAT(html, Catch::Contains(absl::StrCat("data-group=\"", g["name"].get<std::string>())));
    CHECK_THAT(html, Catch::Contains(absl::StrCat("p50 <b data-k=\"p50\">", Us(g["latency"]["p50_us"]))));
    CHECK_THAT(html, Catch::Contains(absl::StrCat("p99 <b data-k=\"p99\">", Us(g["latency"]["p99_us"]))));
    for (const auto& s : g["stages"]) {
      const std::string id = s["id"];
      INFO("stage " << id);
      for (const char* key : {"mean", "p50", "p99", "p99_9", "min", "max"}) {
        CHECK(RowHolds(html, id, key, Us(s[std::string(key) + "_us"])));
      }
      CHECK(RowHolds(html, id, "n", absl::StrCat(s["n"].get<uint64_t>())));
    }
  }
  for (const auto& c : j["slowest"]) {
    CHECK_THAT(html, Catch::Contains(absl::StrCat("<td data-k=\"end_to_end\">", Us(c["latency_us"]))));
    CHECK_THAT(html, Catch::Contains(absl::StrCat("<td data-k=\"start\">", c["start"].get<std::string>())));
  }
  CHECK_THAT(html, Catch::Contains("records: 700 host, 700 target; 700 matched"));
  // The slowest commands fit the page's column (1,000 px; 17 columns): the table takes the
  // column's width, its heads wrap, and the start and group cells may wrap (the browser test
  // html_report_browser measures it at 1,400 px).
  CHECK_THAT(html, Catch::Contains("table.slowest{font-size:12px;width:100%}"));
  CHECK_THAT(html, Catch::Contains("table.slowest th{white-space:normal"));
  CHECK_THAT(html, Catch::Contains("table.slowest td[data-k=start],table.slowest td.text{white-space:normal"));
  // The distribution as steps: horizontal, then vertical segments only.
  const size_t chart = html.find("Latency distribution");
  const std::string distribution = html.substr(chart, html.find("</svg>", chart) - chart);
  CHECK_THAT(distribution, Catch::Contains(" H"));
  CHECK_THAT(distribution, !Catch::Contains(" L"));
  // The charts: bars, the distribution and the timeline, drawn inline.
  CHECK_THAT(html, Catch::Contains("<svg class=\"bars\""));
  CHECK_THAT(html, Catch::Contains("Latency distribution"));
  CHECK_THAT(html, Catch::Contains("Stage latency over time"));
  // Self-contained: nothing is fetched.
  CHECK_THAT(html, !Catch::Contains("<script"));
  CHECK_THAT(html, !Catch::Contains("src="));
  CHECK_THAT(html, !Catch::Contains("href="));
  CHECK_THAT(html, !Catch::Contains("@import"));
}

TEST_CASE("html_report_escapes_what_recordings_name", "[html]") {
  ReportBuilder builder(Scope::kJoined, ReportExtras{.slowest = 1, .charts = true});
  const CommandId id{};
  v1::Record host = MakeRecord(v1::ROLE_HOST, id, HostStamps(1000, 300, 800, 20'000, 470, 200),
                               "nvme<0>n1\"&");
  v1::Record target = MakeRecord(v1::ROLE_TARGET, id, TargetStamps(5000, 200, 300, 5000, 210, 300),
                                 "nullb0");
  host.set_agent("<script>alert('host')</script>");
  target.set_agent("tgt&<i>");
  builder.Add(&host, &target);
  const std::string html = RenderHtml(builder.Build(1, 1'000'000, nullptr));
  CHECK_THAT(html, !Catch::Contains("<script"));
  CHECK_THAT(html, !Catch::Contains("<i>"));
  CHECK_THAT(html, !Catch::Contains("nvme<0>"));
  CHECK_THAT(html, Catch::Contains("&lt;script&gt;alert(&#39;host&#39;)&lt;/script&gt;"));
  CHECK_THAT(html, Catch::Contains("tgt&amp;&lt;i&gt;"));
  CHECK_THAT(html, Catch::Contains("nvme&lt;0&gt;n1&quot;&amp;"));
}

TEST_CASE("html_comparison_draws_both_runs_and_names_the_stage_that_grew", "[html]") {
  TempDir base_dir, slow_dir;
  const Comparison c = Compare(ChartReport(base_dir), ChartReport(slow_dir, 40'000));
  const std::string html = RenderHtml(c);
  CHECK_THAT(html, Catch::Contains("grew most: storage, +40.00 us"));
  CHECK_THAT(html, Catch::Contains(">base</text>"));
  CHECK_THAT(html, Catch::Contains(">new</text>"));
  const nlohmann::json j = ToJson(c);
  for (const auto& s : j["groups"][0]["stages"]) {
    CHECK(RowHolds(html, s["id"], "base", Us(s["base_mean_us"])));
    CHECK(RowHolds(html, s["id"], "new", Us(s["new_mean_us"])));
  }
}

TEST_CASE("html_comparison_shows_percentiles_and_distributions_side_by_side", "[html]") {
  TempDir base_dir, slow_dir;
  const Report base = ChartReport(base_dir);
  const Report slow = ChartReport(slow_dir, 40'000);
  const std::string html = RenderHtml(Compare(base, slow));
  // every stage's percentiles of both runs, from each run's own report
  for (const auto& [side, report] : {std::pair{"base", &base}, std::pair{"new", &slow}}) {
    for (const auto& s : ToJson(*report)["groups"][0]["stages"]) {
      INFO(side << " " << s["id"]);
      for (const char* key : {"p50", "p99", "p99_9", "max"}) {
        CHECK(RowHolds(html, s["id"], absl::StrCat(key, "_", side), Us(s[std::string(key) + "_us"])));
      }
    }
  }
  // both runs' distributions next to each other, each drawn as steps
  const size_t pair = html.find("<div class=\"side-by-side\">");
  REQUIRE(pair != std::string::npos);
  const std::string charts = html.substr(pair, html.find("</div>", pair) - pair);
  CHECK_THAT(charts, Catch::Contains("<figcaption>base</figcaption><svg class=\"chart\""));
  CHECK_THAT(charts, Catch::Contains("<figcaption>new</figcaption><svg class=\"chart\""));
  CHECK_THAT(charts, Catch::Contains(" H"));
  CHECK_THAT(charts, !Catch::Contains(" L"));
}

TEST_CASE("timeline_shows_a_transient_in_the_interval_it_happened", "[html]") {
  TempDir dir;
  // 2,000 commands 1 ms apart; commands 1,000 to 1,099 (1.0 s to 1.1 s) take 500 us more storage.
  WriteRun(dir.File("host.ntp"), dir.File("target.ntp"),
           RunSpec{.commands = 2000, .span_ns = 2'100'000'000}, [](int i) {
             CommandTiming t = Varied(i);
             if (i >= 1000 && i < 1100) t.storage += 500'000;
             return t;
           });
  ReportOptions options;
  options.extras.charts = true;
  const Report report = ReportOf({dir.File("host.ntp"), dir.File("target.ntp")}, options);
  const GroupReport& g = report.groups.at(0);
  REQUIRE(!g.timeline.empty());
  CHECK(g.timeline.size() <= StageTimeline::kMaxBins);
  const auto storage = static_cast<size_t>(Stage::kStorage);
  for (const TimelineBin& bin : g.timeline) {
    const double mid = bin.start_s + g.timeline_bin_s / 2;
    INFO("interval at " << bin.start_s << " s");
    REQUIRE(bin.mean_ns[storage]);
    if (bin.start_s >= 1.0 && bin.start_s + g.timeline_bin_s <= 1.1) {
      CHECK(*bin.mean_ns[storage] > 500'000);
    } else if (mid < 0.99 || mid > 1.11) {
      CHECK(*bin.mean_ns[storage] < 80'000);
    }
  }
}
