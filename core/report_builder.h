// Accumulates broken-down commands into per-group statistics and builds a Report.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "command_samples.h"
#include "io_span.h"
#include "latency_histogram.h"
#include "report.h"
#include "session_edges.h"
#include "slowest_commands.h"
#include "stage_timeline.h"

namespace ntprof {

// Human names for NVMe I/O opcodes and sizes: "read", "4KiB".
std::string OpName(uint32_t opcode);
std::string SizeName(uint64_t bytes);

// What a report holds beyond the tables, when asked for.
struct ReportExtras {
  size_t slowest = 0;   // the N slowest commands (--slowest N)
  bool charts = false;  // distribution curves and stage latency over time (the HTML page)
  size_t samples = 0;   // keep up to N per-command values of each stage (the regression gate)
};

class ReportBuilder {
 public:
  // Which halves this report is about: joined pairs, or one side recorded alone.
  explicit ReportBuilder(Scope scope, ReportExtras extras = {})
      : scope_(scope), extras_(extras), slowest_(extras.slowest) {}
  // It points into its own group map (last_group_).
  ReportBuilder(const ReportBuilder&) = delete;
  ReportBuilder& operator=(const ReportBuilder&) = delete;

  // An agent's wall clock minus its monotonic clock (from a file header): turns the stamps of its
  // records (Record.agent) into approximate wall times for the slowest commands and the timeline.
  void SetClock(const std::string& agent, int64_t wall_minus_mono_ns);

  // One outcome of the join (or one record of a single-side recording). Halves that do not fit
  // the scope (leftovers of a joined report) are only counted.
  void Add(const v1::Record* host, const v1::Record* target);
  void AddCounters(const v1::DeviceCounters& counters);

  // sample_rate and a span turn sampled sums into commands in flight (Little's law) and throughput:
  // span_ns (the recording or interval) or, with RateSpan::kIo, the span each group had I/O.
  Report Build(uint32_t sample_rate, int64_t span_ns, const JoinStats* join,
               RateSpan rates = RateSpan::kGiven) const;

  uint64_t incomplete() const { return incomplete_; }

 private:
  struct Group {
    // The report's, or host-only for a local device's commands in a joined report (they have no
    // target side, and are complete without one).
    Scope scope = Scope::kJoined;
    std::string op;
    bool counted_as_write = false;  // by the device counters (every opcode but write is a read)
    uint32_t bytes = 0;
    std::string device;
    v1::Stack host_stack = v1::STACK_KERNEL;
    v1::Stack target_stack = v1::STACK_KERNEL;
    std::array<LatencyHistogram, kStageCount> stages;
    std::array<LatencyHistogram, kComponentCount> components;
    IoSpan io_span;
    StageTimeline timeline;
    std::shared_ptr<CommandSamples> samples;  // only with ReportExtras::samples
  };
  struct DeviceTotals {
    uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
  };
  struct SampledTotals {
    uint64_t commands = 0, bytes = 0;
  };
  // A device's reads (every opcode but write) or writes, from its sampled commands.
  struct DirectionTotals {
    IoSpan span;  // when they ran: the throughput's span
    // what the block statistics must at least have counted, and the throughput's estimate when
    // they did not
    SampledTotals sampled;
  };

  // A group's throughput from the device's counters, or estimated from the sampled commands when
  // the counters missed some of them.
  Throughput ThroughputOf(const DeviceTotals& counted, const std::string& device,
                          bool write, const SampledTotals* sampled,
                          double seconds, uint32_t sample_rate) const;
  // The group of a record's identity half (created on its first record).
  Group& GroupOf(const v1::Record& identity, Scope scope);

  // The commands worth keeping beyond the statistics: the slowest and the timeline.
  void Keep(const v1::Record* host, const v1::Record* target, const v1::Record& clock_side,
            const CommandBreakdown& breakdown, const std::string& group, Group* g);

  Scope scope_;
  ReportExtras extras_;
  SlowestCommands slowest_;
  std::map<std::string, int64_t> clocks_;  // agent -> wall minus monotonic
  std::map<std::tuple<std::string, uint32_t, std::string>, Group> groups_;
  // The group of the last record added, found again without building its key: an interval's
  // records mostly fall in one group.
  Group* last_group_ = nullptr;
  uint32_t last_group_opcode_ = 0;
  std::map<std::string, DeviceTotals> devices_;  // from the counters: every command, sampled or not
  // device -> [reads, writes]
  std::map<std::string, std::array<DirectionTotals, 2>, std::less<>> directions_;
  // Of every record added; named at Build (naming one is a string built per record).
  std::set<v1::Transport> transports_;
  SessionEdges edges_;  // joined reports: which leftovers lie at the recording's edges
  uint64_t incomplete_ = 0;
  std::map<std::string, uint64_t> missing_stamps_;  // why records were incomplete
};

}  // namespace ntprof
