// What a report says (docs/usage.md, "ntprofctl report and compare"), independent of how it is
// printed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "join_engine.h"
#include "stage_model.h"

namespace ntprof {

class CommandSamples;

struct Distribution {
  uint64_t n = 0;
  double mean_ns = 0;
  int64_t p50_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  uint64_t negative = 0;  // values below zero (a stage must never be negative)
};

struct StageRow {
  Stage stage;
  std::string label;
  Distribution dist;
  double share = 0;                  // of the end-to-end mean, 0..1
  std::optional<double> avg_qd;      // Little's law: commands in this stage on average
  std::vector<int64_t> curve_ns;     // at kCurveQuantiles; only when charts were asked for
};

// The percentiles a distribution chart draws: Percentile(q) of the same histogram the table's
// numbers come from, for each q of kCurveQuantiles.
inline constexpr std::array<double, 29> kCurveQuantiles = {
    0,  1,  2.5, 5,  10, 15, 20, 25, 30, 35, 40, 45,   50,    55,  60,
    65, 70, 75,  80, 85, 90, 95, 97.5, 99, 99.5, 99.8, 99.9, 99.99, 100};

struct ComponentRow {
  Component component;
  Stage stage;
  Distribution dist;
  std::optional<double> avg_qd;
};

// What throughput and avg QD average over.
enum class RateSpan : uint8_t {
  kGiven,  // the span given to the builder: one interval of a live session, whose I/O goes on
  kIo,     // the span in which each group (each device's reads or writes) had I/O: a recording
           // often starts before the workload and stops after it
};

struct Throughput {
  std::string device;
  std::string direction;  // "read" / "write"
  double iops = 0;
  double bytes_per_s = 0;
  double span_s = 0;      // what iops averages over
  // Set when the device's block statistics counted fewer commands than were sampled (NVMe
  // passthrough such as io_uring_cmd on /dev/ngXnY is not in them): iops and bytes_per_s are then
  // the sampled commands times the sample rate, and these say from what.
  struct Estimate {
    uint64_t sampled = 0;          // commands sampled in the direction
    uint32_t sample_rate = 0;
    uint64_t block_counted = 0;    // what the block statistics counted
  };
  std::optional<Estimate> estimated;
};

// One interval of a group's stage latency over time (only when charts were asked for).
struct TimelineBin {
  double start_s = 0;  // since the report's first command (approximate wall clock)
  uint64_t n = 0;      // commands that started in it
  std::array<std::optional<double>, kStageCount> mean_ns{};
  int64_t max_ns = 0;  // the slowest command's total (end to end or in target)
};

struct GroupReport {
  std::string name;    // "read 4KiB nvme0n1"
  std::string op;
  uint32_t bytes = 0;
  std::string device;
  Scope scope = Scope::kJoined;
  Distribution latency;  // end to end (host view) or in-target total
  std::vector<StageRow> stages;       // in print order, the total last
  std::vector<ComponentRow> components;
  std::optional<Throughput> throughput;
  double io_span_s = 0;      // first to last command of the group, on one machine's clock
  double avg_qd_span_s = 0;  // what the stages' avg QD averages over
  std::optional<Stage> largest;
  std::vector<std::string> missing_components;  // optional hooks that were not recorded
  double timeline_bin_s = 0;
  std::vector<TimelineBin> timeline;  // in time order; intervals without a command left out
  // Per-command values for resampling; only when asked for (ReportExtras::samples).
  std::shared_ptr<const CommandSamples> samples;
};

// One of a report's slowest sampled commands: which command it was and where its time went.
struct SlowCommand {
  std::string group;               // its group's name
  std::optional<int64_t> wall_ns;  // when it started (H0; T0 for a target alone), from the file's
                                   // wall/monotonic pair: approximate, for finding it in logs
  std::string host_agent;          // hostnames; empty for a side that was not recorded
  std::string target_agent;
  std::string device;
  uint32_t qid = 0;
  uint32_t cid = 0;
  uint32_t opcode = 0;
  uint64_t slba = 0;
  uint32_t bytes = 0;
  int64_t latency_ns = 0;          // end to end, or in target when the target was recorded alone
  std::array<std::optional<int64_t>, kStageCount> stages{};
};

struct RecordTally {
  uint64_t host = 0;
  uint64_t target = 0;
  uint64_t matched = 0;
  uint64_t host_only = 0;
  uint64_t target_only = 0;
  // Of those, the ones at the recording's edges (one side not recording yet or any more): no loss.
  uint64_t host_only_at_edges = 0;
  uint64_t target_only_at_edges = 0;
  // Pairs of one key and identity whose times cannot be one command (their halves are counted
  // unmatched): a half at an edge or after a loss met the other side's command of the same LBA.
  uint64_t refused = 0;
  uint64_t incomplete = 0;  // a required stamp was missing
  double matched_percent() const { return host == 0 ? 0.0 : 100.0 * matched / host; }
};

struct Report {
  std::string title;             // what was read: files or a session
  std::string transport;         // "tcp", "rdma", "local" or "mixed": of the records read
  uint32_t sample_rate = 0;
  double span_s = 0;  // the recording (or the interval)
  RateSpan rates = RateSpan::kGiven;
  std::vector<GroupReport> groups;
  RecordTally records;
  v1::LossCounters losses;
  std::vector<std::string> notes;  // warnings a reader must see (unfinished files, losses, ...)
  size_t slowest_asked = 0;        // --slowest N; 0: the list is not part of the report
  std::vector<SlowCommand> slowest;  // the slowest first, at most slowest_asked
};

// BASE vs NEW, group by group.
struct StageDelta {
  Stage stage;
  std::string label;
  std::optional<double> base_mean_ns;
  std::optional<double> new_mean_ns;
};

struct GroupComparison {
  std::string name;
  std::string base_name;
  std::string new_name;
  std::vector<StageDelta> stages;  // the stages both runs have, the total last
  // Stages only one run has (it recorded other halves: host alone, target alone): not compared.
  std::vector<StageDelta> base_only;
  std::vector<StageDelta> new_only;
  Distribution base_latency;
  Distribution new_latency;
  // Each run's stage rows (percentiles, and curves when charts were asked for): drawn side by side.
  std::vector<StageRow> base_rows;
  std::vector<StageRow> new_rows;
  bool latency_compared = true;  // both latencies are end to end, or both in-target
  std::optional<Stage> grew_most;        // largest absolute increase of a compared stage's mean
  std::optional<Stage> grew_most_ratio;  // largest ratio new/base of a compared stage
};

struct Comparison {
  std::string base_title;
  std::string new_title;
  std::string base_transport;
  std::string new_transport;
  std::vector<GroupComparison> groups;
  std::vector<std::string> unmatched_groups;  // present on one side only
};

}  // namespace ntprof
