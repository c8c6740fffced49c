#include "watch_ndjson.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ntprof::cli {
namespace {

// JSON has no NaN or infinity (a share of an empty interval): such a value is written as 0 so the
// field stays a number.
double Finite(double value) { return std::isfinite(value) ? value : 0.0; }

nlohmann::json StageJson(const v1::WatchStage& stage) {
  return {{"stage", stage.stage()},
          {"label", stage.label()},
          {"mean_ns", Finite(stage.mean_ns())},
          {"share", Finite(stage.share())}};
}

nlohmann::json GroupJson(const v1::WatchGroup& group) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : group.stages()) stages.push_back(StageJson(s));
  return {{"session", group.session()},
          {"name", group.name()},
          {"scope", group.scope()},
          {"sampled", group.sampled()},
          {"rate_per_s", Finite(group.rate_per_s())},
          {"iops", Finite(group.iops())},
          {"mean_ns", Finite(group.mean_ns())},
          {"p99_ns", group.p99_ns()},
          {"stages", std::move(stages)},
          {"line", group.line()}};
}

}  // namespace

std::string WatchUpdateJson(const v1::WatchUpdate& update) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : update.groups()) groups.push_back(GroupJson(g));
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& n : update.notes()) notes.push_back(n);
  const nlohmann::json line = {{"interval_end_wall_ns", update.interval_end_wall_ns()},
                               {"interval_s", Finite(update.interval_s())},
                               {"dropped_updates", update.dropped_updates()},
                               {"groups", std::move(groups)},
                               {"notes", std::move(notes)}};
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ntprof::cli
