#include <catch2/catch.hpp>

#include "regression_bound.h"

using namespace ntprof;

TEST_CASE("bound_grammar_stage_statistic_and_relative_or_absolute_change", "[gate]") {
  auto p99 = ParseRegressionBound("storage.p99 > +10%");
  REQUIRE(p99.ok());
  CHECK(p99->stage == Stage::kStorage);
  CHECK(!p99->component);
  CHECK(p99->statistic.kind == Statistic::Kind::kPercentile);
  CHECK(p99->statistic.percentile == 99);
  CHECK(p99->above);
  CHECK(p99->relative);
  CHECK(p99->limit == Approx(0.10));
  CHECK(p99->group.empty());
  CHECK(p99->LimitText() == "+10%");

  auto mean = ParseRegressionBound("end-to-end.mean > +20us");
  REQUIRE(mean.ok());
  CHECK(mean->stage == Stage::kEndToEnd);
  CHECK(mean->statistic.kind == Statistic::Kind::kMean);
  CHECK(!mean->relative);
  CHECK(mean->limit == Approx(20'000));
  CHECK(mean->LimitText() == "+20us");

  // Underscores as in JSON ids, no spaces, a unit of its own, a group, a component, p99.9.
  auto drive = ParseRegressionBound("write 16KiB:drive.p99.9>1.5ms");
  REQUIRE(drive.ok());
  CHECK(drive->group == "write 16KiB");
  CHECK(drive->component == Component::kDrive);
  CHECK(drive->statistic.percentile == Approx(99.9));
  CHECK(drive->statistic.Name() == "p99.9");
  CHECK(drive->limit == Approx(1'500'000));
  CHECK(ParseRegressionBound("end_to_end.p50 > 300ns")->limit == Approx(300));
  CHECK(ParseRegressionBound("network.mean > 2 s")->limit == Approx(2e9));

  // '<': crossed when it fell by more than the (negative) change.
  auto faster = ParseRegressionBound("storage.mean < -5%");
  REQUIRE(faster.ok());
  CHECK(!faster->above);
  CHECK(faster->limit == Approx(-0.05));
}

TEST_CASE("bound_grammar_errors_say_what_is_wrong_and_show_the_form", "[gate]") {
  auto message = [](const char* text) {
    auto bound = ParseRegressionBound(text);
    REQUIRE(!bound.ok());
    return std::string(bound.status().message());
  };
  CHECK_THAT(message("storag.p99 > +10%"),
             Catch::Contains("unknown stage or component 'storag'") &&
                 Catch::Contains("storage") && Catch::Contains("e.g. 'storage.p99 > +10%'"));
  CHECK_THAT(message("storage.p100 > +10%"), Catch::Contains("unknown statistic 'p100'"));
  CHECK_THAT(message("storage.p0 > +10%"), Catch::Contains("0 < N < 100"));
  CHECK_THAT(message("storage.max > +10%"), Catch::Contains("bound a percentile"));
  CHECK_THAT(message("storage.p99 > 10"), Catch::Contains("needs a number and a unit"));
  CHECK_THAT(message("storage.p99 > +10xs"), Catch::Contains("needs a number and a unit"));
  CHECK_THAT(message("storage.p99 >= 10%"), Catch::Contains("use > or <"));
  CHECK_THAT(message("storage > 10%"), Catch::Contains("no '.STATISTIC'"));
  CHECK_THAT(message("storage.p99 10%"), Catch::Contains("no '>' or '<'"));
  CHECK_THAT(message(":storage.p99 > 10%"), Catch::Contains("empty group"));
}
