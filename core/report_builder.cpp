#include "report_builder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "transport_name.h"

namespace ntprof {

std::string OpName(uint32_t opcode) {
  switch (opcode) {
    case 0x00: return "flush";
    case 0x01: return "write";
    case 0x02: return "read";
    case 0x04: return "write-uncorrectable";
    case 0x08: return "write-zeroes";
    case 0x09: return "dsm";
    default: return absl::StrFormat("opc-0x%02x", opcode);
  }
}

std::string SizeName(uint64_t bytes) {
  if (bytes == 0) return "0B";
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes % 1024 == 0 && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  return absl::StrCat(bytes, units[u]);
}

namespace {

// The device counters count reads and writes; every other opcode is counted as a read. The one
// place that says which.
bool CountedAsWrite(uint32_t opcode) { return opcode == 0x01; }

int64_t StartOf(const v1::Record& r) { return static_cast<int64_t>(EarliestStamp(r)); }

std::string GroupName(const std::string& op, uint32_t bytes, const std::string& device) {
  return absl::StrCat(op, " ", SizeName(bytes), " ", device.empty() ? "?" : device);
}

}  // namespace

void ReportBuilder::SetClock(const std::string& agent, int64_t wall_minus_mono_ns) {
  clocks_[agent] = wall_minus_mono_ns;
}

void ReportBuilder::Keep(const v1::Record* host, const v1::Record* target,
                         const v1::Record& clock_side, const CommandBreakdown& breakdown,
                         const std::string& group, Group* g) {
  const int64_t start = StartOf(clock_side);
  const auto clock = clocks_.find(clock_side.agent());
  std::optional<int64_t> wall;
  if (start != 0 && clock != clocks_.end()) wall = start + clock->second;
  const Stage total = StagesOf(g->scope).back();
  if (extras_.charts && start != 0) g->timeline.Add(wall.value_or(start), breakdown, total);
  const std::optional<int64_t> latency = breakdown.stage(total);
  if (!latency || !slowest_.WouldKeep(*latency)) return;
  const v1::Record& identity = host ? *host : *target;
  SlowCommand c;
  c.group = group;
  c.wall_ns = wall;
  if (host) c.host_agent = host->agent();
  if (target) c.target_agent = target->agent();
  c.device = identity.device();
  c.qid = identity.qid();
  c.cid = identity.cid();
  c.opcode = identity.opcode();
  c.slba = identity.slba();
  c.bytes = identity.bytes();
  c.latency_ns = *latency;
  c.stages = breakdown.stages;
  slowest_.Offer(std::move(c));
}

void ReportBuilder::Add(const v1::Record* host, const v1::Record* target) {
  // Spans are taken on one side's clock only: the host's, unless the target was recorded alone.
  const v1::Record* clock_side = scope_ == Scope::kTargetOnly ? target : host;
  // Every command of the device ran, matched or not, complete or not: all count for its span.
  if (clock_side) {
    DirectionTotals& d = directions_[clock_side->device()][CountedAsWrite(clock_side->opcode())];
    d.span.Add(*clock_side);
    ++d.sampled.commands;
    d.sampled.bytes += clock_side->bytes();
  }
  for (const v1::Record* r : {host, target}) {
    if (r) transports_.insert(r->transport());
  }
  const Scope scope = host && target ? Scope::kJoined : host ? Scope::kHostOnly : Scope::kTargetOnly;
  // A local block device's command is complete with its host record: no leftover of the join.
  const bool local = scope == Scope::kHostOnly && host->transport() == v1::TRANSPORT_LOCAL;
  if (scope_ == Scope::kJoined && !local) {
    if (scope == Scope::kJoined) {
      edges_.AddMatched(*host, *target);
    } else {
      edges_.AddLeftover(host ? *host : *target);
    }
  }
  if (scope != scope_ && !local) return;  // a leftover of a joined report: the join counts it
  IncompleteRecord why;
  auto breakdown = BreakDown(host, target, &why);
  if (!breakdown) {
    ++incomplete_;
    ++missing_stamps_[std::string(why.missing)];
    return;
  }
  Group& g = GroupOf(host ? *host : *target, scope);
  if (host) g.host_stack = host->stack();
  if (target) g.target_stack = target->stack();
  for (size_t s = 0; s < kStageCount; ++s) {
    if (breakdown->stages[s]) g.stages[s].Add(*breakdown->stages[s]);
  }
  for (size_t c = 0; c < kComponentCount; ++c) {
    if (breakdown->components[c]) g.components[c].Add(*breakdown->components[c]);
  }
  g.io_span.Add(*clock_side);
  if (extras_.samples > 0) {
    if (!g.samples) g.samples = std::make_shared<CommandSamples>(extras_.samples);
    g.samples->Add(*breakdown);
  }
  if (extras_.charts || extras_.slowest > 0) {
    Keep(host, target, *clock_side, *breakdown, GroupName(g.op, g.bytes, g.device), &g);
  }
}

ReportBuilder::Group& ReportBuilder::GroupOf(const v1::Record& identity, Scope scope) {
  if (last_group_ && last_group_opcode_ == identity.opcode() &&
      last_group_->bytes == identity.bytes() && last_group_->device == identity.device())
    return *last_group_;
  Group& g = groups_[{OpName(identity.opcode()), identity.bytes(), identity.device()}];
  if (g.op.empty()) {
    g.scope = scope;
    g.op = OpName(identity.opcode());
    g.counted_as_write = CountedAsWrite(identity.opcode());
    g.bytes = identity.bytes();
    g.device = identity.device();
  }
  last_group_ = &g;
  last_group_opcode_ = identity.opcode();
  return g;
}

void ReportBuilder::AddCounters(const v1::DeviceCounters& counters) {
  DeviceTotals& d = devices_[counters.device()];
  d.reads += counters.reads();
  d.writes += counters.writes();
  d.read_bytes += counters.read_bytes();
  d.write_bytes += counters.write_bytes();
}

namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

Distribution Summarize(const LatencyHistogram& h) {
  Distribution d;
  d.n = h.count();
  d.mean_ns = h.mean();
  d.p50_ns = h.Percentile(50);
  d.p99_ns = h.Percentile(99);
  d.p999_ns = h.Percentile(99.9);
  d.min_ns = h.min();
  d.max_ns = h.max();
  d.negative = h.negatives();
  return d;
}

std::optional<double> CommandsInFlight(const LatencyHistogram& h, uint32_t sample_rate,
                                       int64_t span_ns) {
  if (span_ns <= 0 || sample_rate == 0) return std::nullopt;
  return static_cast<double>(sample_rate) * h.sum() / static_cast<double>(span_ns);
}

}  // namespace

namespace {

// A stage is a difference of two stamps of one machine taken in order, so it is never negative: a
// negative one means a stamp sits in the wrong place (a probe placed where a later event already
// happened, such as an R2T taken for the reply) and every number of that stage is suspect.
// A stage or component is a span between two events of one command: never negative. One that is
// means a stamp is misplaced (a probe at the wrong point of the driver), and the report says so.
void AddNegativeNote(const GroupReport& g, const Distribution& dist, const std::string& label,
                     const std::string& what, std::vector<std::string>* notes) {
  if (dist.negative == 0) return;
  notes->push_back(absl::StrCat(
      "WARNING: ", dist.negative, " of ", dist.n, " commands of \"", g.name, "\" have a negative ",
      label, " (min ", absl::StrFormat("%.2f", dist.min_ns / 1e3), " us): a ", what,
      " is never negative, so a stamp is misplaced (a probe at the wrong point of the driver); this ",
      what, "'s numbers cannot be trusted"));
}

void AddNegativeNotes(const GroupReport& g, std::vector<std::string>* notes) {
  for (const StageRow& row : g.stages) AddNegativeNote(g, row.dist, row.label, "stage", notes);
  for (const ComponentRow& row : g.components) {
    AddNegativeNote(g, row.dist, std::string(ComponentLabel(row.component)), "component", notes);
  }
}

}  // namespace

Throughput ReportBuilder::ThroughputOf(const DeviceTotals& counted, const std::string& device,
                                      bool write, const SampledTotals* sampled,
                                      double seconds, uint32_t sample_rate) const {
  Throughput t{device, write ? "write" : "read", (write ? counted.writes : counted.reads) / seconds,
               (write ? counted.write_bytes : counted.read_bytes) / seconds, seconds, {}};
  const uint64_t block_counted = write ? counted.writes : counted.reads;
  // Every sampled command is a command the device completed: fewer counted means the block
  // statistics missed some (NVMe passthrough bypasses them), and 0 IOPS would be false.
  if (sampled && block_counted < sampled->commands && sample_rate > 0) {
    t.iops = static_cast<double>(sampled->commands) * sample_rate / seconds;
    t.bytes_per_s = static_cast<double>(sampled->bytes) * sample_rate / seconds;
    t.estimated = Throughput::Estimate{sampled->commands, sample_rate, block_counted};
  }
  return t;
}

Report ReportBuilder::Build(uint32_t sample_rate, int64_t span_ns, const JoinStats* join,
                            RateSpan rates) const {
  Report report;
  report.sample_rate = sample_rate;
  report.span_s = Seconds(span_ns);
  report.rates = rates;
  report.slowest_asked = extras_.slowest;
  report.slowest = slowest_.Sorted();
  // Every group's timeline counts from the report's first command, so they line up.
  int64_t origin_ns = 0;
  bool have_origin = false;
  for (const auto& [key, g] : groups_) {
    if (g.timeline.empty()) continue;
    origin_ns = have_origin ? std::min(origin_ns, g.timeline.first_ns()) : g.timeline.first_ns();
    have_origin = true;
  }

  for (const auto& [key, g] : groups_) {
    const Stage total = StagesOf(g.scope).back();
    GroupReport gr;
    gr.op = g.op;
    gr.bytes = g.bytes;
    gr.device = g.device;
    gr.scope = g.scope;
    gr.name = GroupName(g.op, g.bytes, g.device);
    gr.samples = g.samples;
    if (!g.timeline.empty()) {
      gr.timeline_bin_s = Seconds(g.timeline.width_ns());
      gr.timeline = g.timeline.Bins(origin_ns);
    }
    const LatencyHistogram& whole = g.stages[static_cast<size_t>(total)];
    gr.latency = Summarize(whole);
    gr.io_span_s = Seconds(g.io_span.LongestNs());
    const int64_t qd_span_ns = rates == RateSpan::kIo ? g.io_span.LongestNs() : span_ns;
    gr.avg_qd_span_s = Seconds(qd_span_ns);
    double largest_mean = -1;
    for (Stage s : StagesOf(g.scope)) {
      const LatencyHistogram& h = g.stages[static_cast<size_t>(s)];
      if (h.count() == 0) continue;
      StageRow row{s, std::string(StageLabel(s, g.host_stack, g.target_stack)), Summarize(h),
                   whole.mean() > 0 ? h.mean() / whole.mean() : 0.0,
                   CommandsInFlight(h, sample_rate, qd_span_ns), {}};
      if (extras_.charts) {
        for (double q : kCurveQuantiles) row.curve_ns.push_back(h.Percentile(q));
      }
      if (s != total && row.dist.mean_ns > largest_mean) {
        largest_mean = row.dist.mean_ns;
        gr.largest = s;
      }
      gr.stages.push_back(std::move(row));
    }
    for (size_t c = 0; c < kComponentCount; ++c) {
      const LatencyHistogram& h = g.components[c];
      if (h.count() == 0) continue;
      const auto component = static_cast<Component>(c);
      gr.components.push_back(ComponentRow{component, ComponentStage(component), Summarize(h),
                                           CommandsInFlight(h, sample_rate, qd_span_ns)});
    }
    const auto by_device = directions_.find(g.device);
    const DirectionTotals* sampled =
        by_device == directions_.end() ? nullptr : &by_device->second[g.counted_as_write];
    int64_t throughput_span_ns = span_ns;
    if (rates == RateSpan::kIo) throughput_span_ns = sampled ? sampled->span.LongestNs() : 0;
    if (auto d = devices_.find(g.device); d != devices_.end() && throughput_span_ns > 0) {
      gr.throughput = ThroughputOf(d->second, g.device, g.counted_as_write,
                                   sampled ? &sampled->sampled : nullptr,
                                   Seconds(throughput_span_ns), sample_rate);
    }
    report.groups.push_back(std::move(gr));
  }

  RecordTally& t = report.records;
  if (join) {
    t.host = join->host;
    t.target = join->target;
    t.matched = join->matched;
    t.host_only = join->host_only;
    t.target_only = join->target_only;
    t.refused = join->refused;
    const SessionEdges::AtEdges at_edges = edges_.Count();
    t.host_only_at_edges = at_edges.host;
    t.target_only_at_edges = at_edges.target;
  }
  t.incomplete = incomplete_;
  std::set<std::string> transport_names;
  for (v1::Transport transport : transports_) transport_names.insert(TransportName(transport));
  if (transport_names.size() == 1) report.transport = *transport_names.begin();
  if (transport_names.size() > 1) report.transport = "mixed";
  for (const GroupReport& g : report.groups) AddNegativeNotes(g, &report.notes);
  for (const auto& [stamp, n] : missing_stamps_) {
    report.notes.push_back(
        absl::StrCat(n, " record(s) left out of the stages: missing stamp ", stamp));
  }
  return report;
}

}  // namespace ntprof
