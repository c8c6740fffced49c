#include "fleet_report.h"

#include <time.h>

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "command_row.h"

namespace ntprof::clickhouse {
namespace {

std::string Literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string AnyOf(const std::string& column, const std::vector<std::string>& values) {
  std::vector<std::string> literals;
  for (const auto& v : values) literals.push_back(Literal(v));
  return absl::StrCat(column, " IN (", absl::StrJoin(literals, ", "), ")");
}

std::string Utc(int64_t ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", absl::FromUnixNanos(ns), absl::UTCTimeZone());
}

uint64_t FirstStamp(const v1::Record& r) {
  uint64_t first = 0;
  for (uint64_t s : r.stamps()) {
    if (s != 0 && (first == 0 || s < first)) first = s;
  }
  return first;
}

uint64_t LastStamp(const v1::Record& r) {
  uint64_t last = 0;
  for (uint64_t s : r.stamps()) last = std::max(last, s);
  return last;
}

}  // namespace

std::string Selection::Describe() const {
  std::vector<std::string> parts;
  if (!sessions.empty()) parts.push_back(absl::StrCat("session ", absl::StrJoin(sessions, ",")));
  if (from_ns || to_ns) {
    parts.push_back(absl::StrCat(from_ns ? Utc(*from_ns) : "", "..", to_ns ? Utc(*to_ns) : ""));
  }
  if (!subsystems.empty()) parts.push_back(absl::StrCat("subsystem ", absl::StrJoin(subsystems, ",")));
  if (!hosts.empty()) parts.push_back(absl::StrCat("host ", absl::StrJoin(hosts, ",")));
  if (!targets.empty()) parts.push_back(absl::StrCat("target ", absl::StrJoin(targets, ",")));
  if (!classes.empty()) parts.push_back(absl::StrCat("class ", absl::StrJoin(classes, ",")));
  return parts.empty() ? "every command" : absl::StrJoin(parts, ", ");
}

std::string WhereClause(const Selection& s) {
  std::vector<std::string> terms;
  if (!s.sessions.empty()) terms.push_back(AnyOf("session", s.sessions));
  // wall_time (seconds) lets ClickHouse skip partitions; wall_ns is the exact bound.
  if (s.from_ns) {
    terms.push_back(absl::StrCat("wall_time >= toDateTime(", *s.from_ns / 1'000'000'000, ")"));
    terms.push_back(absl::StrCat("wall_ns >= ", *s.from_ns));
  }
  if (s.to_ns) {
    terms.push_back(
        absl::StrCat("wall_time <= toDateTime(", *s.to_ns / 1'000'000'000, ")"));
    terms.push_back(absl::StrCat("wall_ns < ", *s.to_ns));
  }
  if (!s.subsystems.empty()) terms.push_back(AnyOf("subsystem", s.subsystems));
  if (!s.hosts.empty()) terms.push_back(AnyOf("host", s.hosts));
  if (!s.targets.empty()) terms.push_back(AnyOf("target", s.targets));
  if (!s.classes.empty()) {
    terms.push_back(absl::StrCat("(", AnyOf("op", s.classes), " OR ", AnyOf("io_class", s.classes),
                                 ")"));
  }
  return terms.empty() ? "1" : absl::StrJoin(terms, " AND ");
}

absl::StatusOr<int64_t> ParseWallTime(const std::string& text) {
  int64_t seconds = 0;
  if (absl::SimpleAtoi(text, &seconds)) return seconds * 1'000'000'000;
  std::string error;
  absl::Time t;
  for (const char* format : {"%Y-%m-%dT%H:%M:%E*S%Ez", "%Y-%m-%dT%H:%M:%E*SZ",
                             "%Y-%m-%d %H:%M:%E*S", "%Y-%m-%dT%H:%M:%E*S", "%Y-%m-%d"}) {
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &t, &error)) {
      return absl::ToUnixNanos(t);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("time '", text, "': expected 2026-12-01T10:00:00Z, '2026-12-01 10:00:00' (UTC) ",
                   "or seconds since 1970"));
}

absl::StatusOr<Report> BuildFleetReport(HttpClient& client, const TableName& table,
                                        const Selection& selection, ReportExtras extras) {
  const std::string where = WhereClause(selection);
  // FINAL: one row per (session, command_key) even before ClickHouse merged replayed copies.
  const std::string from = absl::StrCat(table.Qualified(), " FINAL WHERE ", where);

  // First what kind of report: which halves, how sampled.
  uint64_t with_host = 0, with_target = 0, rows = 0;
  std::set<uint32_t> rates;
  std::set<std::string> transports, sessions;
  absl::Status st = client.Select(
      absl::StrCat("SELECT side, sample_rate, transport, session, count() FROM ", from,
                   " GROUP BY side, sample_rate, transport, session FORMAT TabSeparated"),
      [&](absl::string_view line) -> absl::Status {
        std::vector<std::string> f = absl::StrSplit(line, '\t');
        uint64_t n = 0;
        uint32_t rate = 0;
        if (f.size() != 5 || !absl::SimpleAtoi(f[4], &n) || !absl::SimpleAtoi(f[1], &rate)) {
          return absl::DataLossError(absl::StrCat("unexpected answer: ", line.substr(0, 200)));
        }
        if (f[0] != "target") with_host += n;
        if (f[0] != "host") with_target += n;
        rows += n;
        rates.insert(rate);
        transports.insert(f[2]);
        sessions.insert(f[3]);
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (rows == 0) {
    return absl::NotFoundError(absl::StrCat("no commands in ", table.Qualified(), " for ",
                                            selection.Describe()));
  }
  const Scope scope = with_host && with_target ? Scope::kJoined
                      : with_host              ? Scope::kHostOnly
                                               : Scope::kTargetOnly;
  ReportBuilder builder(scope, extras);
  JoinStats stats;
  std::map<std::string, std::pair<uint64_t, uint64_t>> agent_span;  // scope side: first, last
  std::set<std::string> clocks_set;
  st = client.Select(
      absl::StrCat("SELECT ", ColumnList(), " FROM ", from,
                   " ORDER BY wall_ns, command_key FORMAT TabSeparated"),
      [&](absl::string_view line) -> absl::Status {
        auto command = DecodeRow(line);
        if (!command.ok()) return command.status();
        const v1::Record* host = command->host ? &*command->host : nullptr;
        const v1::Record* target = command->target ? &*command->target : nullptr;
        for (const auto& [r, clock] : {std::pair{host, command->context.host_clock_ns},
                                       std::pair{target, command->context.target_clock_ns}}) {
          if (r && clocks_set.insert(r->agent()).second) builder.SetClock(r->agent(), clock);
        }
        stats.host += host != nullptr;
        stats.target += target != nullptr;
        if (host && target) {
          ++stats.matched;
        } else if (host) {
          // A local block device's command is complete alone: no leftover of the join.
          if (host->transport() != v1::TRANSPORT_LOCAL) ++stats.host_only;
        } else {
          ++stats.target_only;
        }
        const v1::Record* side = scope == Scope::kTargetOnly ? target : host;
        if (side && FirstStamp(*side) != 0) {
          auto [it, fresh] = agent_span.try_emplace(side->agent(), FirstStamp(*side),
                                                    LastStamp(*side));
          if (!fresh) {
            it->second.first = std::min(it->second.first, FirstStamp(*side));
            it->second.second = std::max(it->second.second, LastStamp(*side));
          }
        }
        builder.Add(host, target);
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (scope != Scope::kJoined) {
    // One side recorded alone: nothing was joined (as in the file report).
    stats.matched = stats.host_only = stats.target_only = 0;
  }
  int64_t span_ns = 0;
  for (const auto& [agent, span] : agent_span) {
    span_ns = std::max(span_ns, static_cast<int64_t>(span.second - span.first));
  }
  Report report = builder.Build(*rates.begin(), span_ns, &stats, RateSpan::kIo);
  report.title = absl::StrCat("ClickHouse ", table.Qualified(), ": ", selection.Describe());
  report.transport = transports.size() == 1 ? *transports.begin() : "mixed";
  if (rates.size() > 1) {
    report.notes.push_back(absl::StrCat(
        "the selection mixes sample rates (", absl::StrJoin(rates, ", "),
        "); avg QD uses 1 in ", *rates.begin()));
  }
  if (sessions.size() > 1) {
    report.notes.push_back(absl::StrCat(sessions.size(), " sessions: ", absl::StrJoin(sessions, ", ")));
  }
  report.notes.push_back(
      "from the fleet store: the span is first to last command; throughput and the agents' "
      "losses are in the sessions' files (ntprofctl report SESSION)");
  return report;
}

}  // namespace ntprof::clickhouse
