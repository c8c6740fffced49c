#include "report_text.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "report_builder.h"
#include "slowest_commands.h"

namespace ntprof {
namespace {

constexpr int kBarWidth = 30;  // characters for 100 % of the latency

double Us(double ns) { return ns / 1000.0; }

// A bar of eighth-blocks proportional to share (0..1).
std::string Bar(double share) {
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  if (!(share > 0)) return "";
  const int eighths = static_cast<int>(std::lround(std::min(share, 1.0) * kBarWidth * 8));
  std::string bar;
  for (int i = 0; i < eighths / 8; ++i) bar += "█";
  bar += kEighths[eighths % 8];
  return bar.empty() ? "▏" : bar;
}

std::string Qd(const std::optional<double>& qd) {
  return qd ? absl::StrFormat("%8.2f", *qd) : std::string("       -");
}

std::string Rate(double bytes_per_s) {
  if (bytes_per_s >= 1024.0 * 1024 * 1024) return absl::StrFormat("%.2f GiB/s", bytes_per_s / (1 << 30));
  if (bytes_per_s >= 1024.0 * 1024) return absl::StrFormat("%.1f MiB/s", bytes_per_s / (1 << 20));
  return absl::StrFormat("%.1f KiB/s", bytes_per_s / 1024);
}

std::string ScopeNote(Scope scope) {
  switch (scope) {
    case Scope::kJoined: return "host + target";
    case Scope::kHostOnly: return "host only";
    case Scope::kTargetOnly: return "target only";
  }
  return "";
}

void RenderLosses(const v1::LossCounters& l, std::string* out) {
  const std::pair<uint64_t, const char*> causes[] = {
      {l.ring_buffer_full(), "ring buffer full"},
      {l.inflight_table_full(), "in-flight table full"},
      {l.evicted_incomplete(), "never completed (evicted)"},
      {l.missing_stamp(), "missing stamp"},
      {l.spool_full(), "spool full"},
      {l.completion_missed(), "completion hook skipped by the kernel"},
      {l.unfinished_at_stop(), "still in flight at stop"}};
  std::string parts;
  for (const auto& [n, what] : causes) {
    if (n > 0) absl::StrAppend(&parts, parts.empty() ? "" : ", ", n, " ", what);
  }
  if (!parts.empty()) absl::StrAppend(out, "lost: ", parts, "\n");
}

// The kernel's recursion misses are runs of a BPF program it skipped, on any command, sampled or
// not; the agent drops no record for them. What they did to a sampled command is
// already counted under its own cause.
void RenderSkippedProbeRuns(uint64_t n, std::string* out) {
  if (n == 0) return;
  absl::StrAppend(out, n, n == 1 ? " probe run" : " probe runs",
                  " skipped by the kernel (nested on one CPU), not a lost record: a sampled "
                  "command hit by one is counted above as incomplete, unmatched or lost\n");
}

// NVMe/TCP sockets the host's programs had to push out of their full socket table: a sampled
// command in flight on one came without its receive stamps (already counted as a missing stamp).
void RenderUntrackedSockets(uint64_t n, std::string* out) {
  if (n == 0) return;
  absl::StrAppend(out, n, n == 1 ? " NVMe/TCP socket" : " NVMe/TCP sockets",
                  " pushed out of the host's socket table (all its slots taken): a sampled command "
                  "then in flight on one misses its receive stamps (counted above as missing "
                  "stamp)\n");
}

std::string SpanNote(const GroupReport& g, double span_s, RateSpan rates) {
  if (rates == RateSpan::kIo) {
    return absl::StrFormat(", %.1f s recorded; avg QD over the %.1f s the group had I/O", span_s,
                           g.avg_qd_span_s);
  }
  return span_s > 0 ? absl::StrFormat(", %.1f s", span_s) : std::string();
}

std::string ThroughputSpanNote(const Throughput& t, RateSpan rates) {
  return rates == RateSpan::kIo ? absl::StrFormat(", over the %.1f s they had I/O", t.span_s)
                                : std::string();
}

}  // namespace

std::string GroupContext(const GroupReport& g, const Report& report) {
  std::string out = absl::StrCat(ScopeNote(g.scope), ", ", g.latency.n, " sampled");
  if (report.sample_rate > 1) absl::StrAppend(&out, ", 1 in ", report.sample_rate);
  absl::StrAppend(&out, SpanNote(g, report.span_s, report.rates));
  return out;
}

std::string ThroughputLine(const Throughput& t, RateSpan rates) {
  std::string line = absl::StrFormat("throughput (all %ss on %s%s): %s%.0f IOPS, %s", t.direction,
                                     t.device, ThroughputSpanNote(t, rates),
                                     t.estimated ? "~" : "", t.iops, Rate(t.bytes_per_s));
  if (t.estimated) {
    absl::StrAppend(&line, absl::StrFormat(
                               ", estimated from %d sampled x 1 in %d: the block statistics "
                               "counted %d (NVMe passthrough, such as io_uring_cmd on /dev/ngXnY, "
                               "is not in them)",
                               t.estimated->sampled, t.estimated->sample_rate,
                               t.estimated->block_counted));
  }
  return line;
}

std::string LargestLine(const GroupReport& g) {
  if (!g.largest) return "";
  for (const StageRow& row : g.stages) {
    if (row.stage != *g.largest) continue;
    return absl::StrFormat("largest: %s (%.2f us), %.0f %% of the latency", row.label,
                           Us(row.dist.mean_ns), row.share * 100);
  }
  return "";
}

namespace {

// The label column: wide enough for the longest label, so no row's numbers shift right.
template <typename Rows, typename LabelOf>
int LabelWidth(int at_least, const Rows& rows, LabelOf label_of) {
  size_t width = static_cast<size_t>(at_least);
  for (const auto& row : rows) width = std::max(width, std::string_view(label_of(row)).size());
  return static_cast<int>(width);
}

void RenderGroup(const GroupReport& g, const Report& report, TextOptions options,
                 std::string* out) {
  absl::StrAppend(out, g.name, "  (", GroupContext(g, report), ")\n");
  absl::StrAppend(out, absl::StrFormat("  latency (us): mean %.2f  p50 %.2f  p99 %.2f  p99.9 %.2f\n",
                                       Us(g.latency.mean_ns), Us(g.latency.p50_ns),
                                       Us(g.latency.p99_ns), Us(g.latency.p999_ns)));
  if (g.throughput) absl::StrAppend(out, "  ", ThroughputLine(*g.throughput, report.rates), "\n");
  const int stage_width =
      LabelWidth(36, g.stages, [](const StageRow& row) -> const std::string& { return row.label; });
  absl::StrAppend(out, absl::StrFormat("  %-*s %10s %8s %8s\n", stage_width, "stage", "mean us",
                                       "share", "avg QD"));
  for (const StageRow& row : g.stages) {
    const bool total = row.stage == Stage::kEndToEnd || row.stage == Stage::kTargetTotal;
    absl::StrAppend(out, absl::StrFormat("  %-*s %10.2f %6.1f %% %s  %s\n", stage_width, row.label,
                                         Us(row.dist.mean_ns), row.share * 100, Qd(row.avg_qd),
                                         total ? "" : Bar(row.share)));
  }
  if (g.largest) absl::StrAppend(out, "  ", LargestLine(g), "\n");
  if (options.detail && !g.components.empty()) {
    // Components are indented two more than the heading and the stage names above them.
    const int component_width = LabelWidth(
        42, g.components, [](const ComponentRow& c) { return ComponentLabel(c.component); });
    absl::StrAppend(out, absl::StrFormat("  %-*s %8s %10s %8s %10s %10s\n", component_width + 2,
                                         "component", "n", "mean us", "avg QD", "p50 us", "p99 us"));
    for (const StageRow& stage : g.stages) {
      bool header = false;
      for (const ComponentRow& c : g.components) {
        if (c.stage != stage.stage) continue;
        if (!header) {
          absl::StrAppend(out, "  ", stage.label, "\n");
          header = true;
        }
        absl::StrAppend(out, absl::StrFormat("    %-*s %8d %10.2f %s %10.2f %10.2f\n",
                                             component_width, ComponentLabel(c.component), c.dist.n,
                                             Us(c.dist.mean_ns), Qd(c.avg_qd), Us(c.dist.p50_ns),
                                             Us(c.dist.p99_ns)));
      }
    }
  }
}

// "network, storage (only in base); network and target (not recorded) (only in new)"
std::string NotCompared(const GroupComparison& g) {
  std::vector<std::string> parts;
  for (const auto& [only, side] : {std::pair{&g.base_only, "base"}, std::pair{&g.new_only, "new"}}) {
    if (only->empty()) continue;
    std::vector<std::string> labels;
    for (const StageDelta& d : *only) labels.push_back(d.label);
    parts.push_back(absl::StrCat(absl::StrJoin(labels, ", "), " (only in ", side, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

// One line per command: where it ran, what it was, its total and every stage.
void RenderSlowest(const Report& report, std::string* out) {
  absl::StrAppend(out, SlowestHeading(report), "\n");
  const std::vector<Stage> columns = SlowestColumns(report);
  absl::StrAppend(out, absl::StrFormat("  %-26s %-12s %-12s %5s %5s %-6s %12s %8s %10s", "start",
                                       "host", "target", "qid", "cid", "op", "lba", "bytes",
                                       StageId(SlowestTotal(report))));
  for (Stage s : columns) absl::StrAppend(out, absl::StrFormat(" %13s", StageId(s)));
  absl::StrAppend(out, "  group\n");
  for (const SlowCommand& c : report.slowest) {
    absl::StrAppend(out, absl::StrFormat(
                             "  %-26s %-12s %-12s %5d %5d %-6s %12d %8d %10.2f",
                             c.wall_ns ? WallTimeText(*c.wall_ns) : std::string("-"),
                             c.host_agent.empty() ? "-" : c.host_agent,
                             c.target_agent.empty() ? "-" : c.target_agent, c.qid, c.cid,
                             OpName(c.opcode), c.slba, c.bytes, Us(c.latency_ns)));
    for (Stage s : columns) {
      const auto& v = c.stages[static_cast<size_t>(s)];
      absl::StrAppend(out, v ? absl::StrFormat(" %13.2f", Us(*v)) : std::string("             -"));
    }
    absl::StrAppend(out, "  ", c.group, "\n");
  }
}

}  // namespace

std::vector<std::string> RecordLines(const Report& report) {
  std::vector<std::string> lines;
  const RecordTally& t = report.records;
  std::string records;
  if (t.target == 0) {
    records = absl::StrFormat("records: %d host, no target recording", t.host);
  } else if (t.host == 0) {
    records = absl::StrFormat("records: %d target, no host recording", t.target);
  } else {
    records = absl::StrFormat("records: %d host, %d target; %d matched (%.1f %% of the host's)",
                              t.host, t.target, t.matched, t.matched_percent());
  }
  if (t.host_only + t.target_only > 0 && t.host > 0 && t.target > 0) {
    absl::StrAppend(&records, absl::StrFormat("; unmatched: %d host, %d target", t.host_only,
                                              t.target_only));
    if (t.host_only_at_edges + t.target_only_at_edges > 0) {
      absl::StrAppend(&records, absl::StrFormat(
                                    " (%d host, %d target at the recording's edges: the other side "
                                    "was not recording yet or any more, no loss)",
                                    t.host_only_at_edges, t.target_only_at_edges));
    }
  }
  if (t.refused > 0) {
    absl::StrAppend(&records, absl::StrFormat("; %d pair(s) of one command id and LBA refused: "
                                              "their times cannot be one command",
                                              t.refused));
  }
  if (t.incomplete > 0) absl::StrAppend(&records, absl::StrFormat("; %d incomplete", t.incomplete));
  lines.push_back(std::move(records));
  std::string more;
  RenderLosses(report.losses, &more);
  RenderSkippedProbeRuns(report.losses.nested_probe_miss(), &more);
  RenderUntrackedSockets(report.losses.socket_table_full(), &more);
  for (absl::string_view line : absl::StrSplit(more, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  for (const std::string& note : report.notes) lines.push_back(absl::StrCat("note: ", note));
  return lines;
}

std::string SlowestHeading(const Report& report) {
  uint64_t sampled = 0;
  for (const GroupReport& g : report.groups) sampled += g.latency.n;
  return absl::StrCat("slowest ", report.slowest.size(), " of ", sampled,
                      " sampled commands (us; start: approximate wall time, UTC)");
}

std::string RenderText(const Report& report, TextOptions options) {
  std::string out;
  for (const GroupReport& g : report.groups) {
    RenderGroup(g, report, options, &out);
    out += "\n";
  }
  if (report.groups.empty()) out += "no complete sampled commands\n\n";
  if (report.slowest_asked > 0) {
    RenderSlowest(report, &out);
    out += "\n";
  }
  for (const std::string& line : RecordLines(report)) absl::StrAppend(&out, line, "\n");
  return out;
}

std::vector<std::string> VerdictLines(const GroupComparison& g) {
  std::vector<std::string> lines;
  const std::string not_compared = NotCompared(g);
  if (!not_compared.empty()) lines.push_back(absl::StrCat("not compared: ", not_compared));
  // Named among the compared stages only; say so when some were left out.
  const std::string among = not_compared.empty() ? "" : " of the compared stages";
  auto describe = [&](Stage s) {
    for (const StageDelta& d : g.stages) {
      if (d.stage == s) {
        return absl::StrFormat("%s, %+.2f us (%.2fx)", d.label,
                               Us(*d.new_mean_ns - *d.base_mean_ns),
                               *d.base_mean_ns > 0 ? *d.new_mean_ns / *d.base_mean_ns : 0.0);
      }
    }
    return std::string();
  };
  if (g.grew_most) {
    lines.push_back(absl::StrCat("grew most", among, ": ", describe(*g.grew_most)));
    if (g.grew_most_ratio && *g.grew_most_ratio != *g.grew_most) {
      lines.push_back(absl::StrCat("largest ratio", among, ": ", describe(*g.grew_most_ratio)));
    }
  } else {
    lines.push_back(absl::StrCat("no", not_compared.empty() ? "" : " compared", " stage grew"));
  }
  return lines;
}

std::string RenderText(const Comparison& c) {
  std::string out;
  const std::string base_head = c.base_transport == c.new_transport ? "base" : c.base_transport;
  const std::string new_head = c.base_transport == c.new_transport ? "new" : c.new_transport;
  absl::StrAppend(&out, "base: ", c.base_title, " (", c.base_transport, ")\n");
  absl::StrAppend(&out, "new:  ", c.new_title, " (", c.new_transport, ")\n\n");
  for (const GroupComparison& g : c.groups) {
    absl::StrAppend(&out, g.name, "\n");
    absl::StrAppend(&out, absl::StrFormat("  %-36s %10s %10s %10s %8s\n", "stage (mean us)",
                                          base_head, new_head, "diff", "ratio"));
    auto cell = [](const std::optional<double>& v) {
      return v ? absl::StrFormat("%10.2f", Us(*v)) : std::string("         -");
    };
    for (const StageDelta& d : g.stages) {
      std::string diff = "         -";
      std::string ratio = "       -";
      if (d.base_mean_ns && d.new_mean_ns) {
        diff = absl::StrFormat("%+10.2f", Us(*d.new_mean_ns - *d.base_mean_ns));
        if (*d.base_mean_ns > 0) ratio = absl::StrFormat("%7.2fx", *d.new_mean_ns / *d.base_mean_ns);
      }
      absl::StrAppend(&out, absl::StrFormat("  %-36s %s %s %s %s\n", d.label, cell(d.base_mean_ns),
                                            cell(d.new_mean_ns), diff, ratio));
    }
    if (g.latency_compared) {
      absl::StrAppend(&out, absl::StrFormat("  %-36s %10.2f %10.2f %+10.2f\n", "p99 latency",
                                            Us(g.base_latency.p99_ns), Us(g.new_latency.p99_ns),
                                            Us(g.new_latency.p99_ns - g.base_latency.p99_ns)));
    }
    for (const std::string& line : VerdictLines(g)) absl::StrAppend(&out, "  ", line, "\n");
    out += "\n";
  }
  for (const std::string& u : c.unmatched_groups) absl::StrAppend(&out, "note: ", u, "\n");
  return out;
}

}  // namespace ntprof
