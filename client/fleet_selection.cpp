#include "fleet_selection.h"

namespace ntprof::cli {

void AddFleetFlags(CLI::App* cmd, FleetFlags* f) {
  const char* group = "Fleet store (ClickHouse)";
  cmd->add_option("--clickhouse", f->url,
                  "Report from ClickHouse at this URL (http://HOST:8123) instead of files")
      ->group(group);
  cmd->add_option("--clickhouse-ca", f->ca, "PEM CA of an https ClickHouse")->group(group);
  cmd->add_option("--clickhouse-table", f->table, "DATABASE.TABLE the collectors write")
      ->default_str(f->table)
      ->group(group);
  cmd->add_option("--session", f->sessions, "Only these sessions (repeatable)")->group(group);
  cmd->add_option("--from", f->from,
                  "Commands from this wall time on (2026-12-01T10:00:00Z, UTC, or epoch seconds)")
      ->group(group);
  cmd->add_option("--to", f->to, "Commands before this wall time")->group(group);
  cmd->add_option("--subsystem", f->subsystems, "Only this subsystem NQN (repeatable)")
      ->group(group);
  cmd->add_option("--host", f->hosts, "Only commands of this host agent (repeatable)")
      ->group(group);
  cmd->add_option("--target", f->targets, "Only commands of this target agent (repeatable)")
      ->group(group);
  cmd->add_option("--class", f->classes,
                  "Only this I/O class: an operation (read) or operation-size (read-4KiB)")
      ->group(group);
}

absl::StatusOr<clickhouse::Selection> SelectionOf(const FleetFlags& flags,
                                                  const std::vector<std::string>& sessions,
                                                  const std::string& from, const std::string& to) {
  clickhouse::Selection s;
  s.sessions = flags.sessions;
  s.sessions.insert(s.sessions.end(), sessions.begin(), sessions.end());
  if (!from.empty()) {
    auto t = clickhouse::ParseWallTime(from);
    if (!t.ok()) return t.status();
    s.from_ns = *t;
  }
  if (!to.empty()) {
    auto t = clickhouse::ParseWallTime(to);
    if (!t.ok()) return t.status();
    s.to_ns = *t;
  }
  s.subsystems = flags.subsystems;
  s.hosts = flags.hosts;
  s.targets = flags.targets;
  s.classes = flags.classes;
  return s;
}

absl::StatusOr<Report> FleetReport(const FleetFlags& flags,
                                   const clickhouse::Selection& selection, ReportExtras extras) {
  auto table = clickhouse::ParseTableName(flags.table);
  if (!table.ok()) return table.status();
  clickhouse::HttpClient client(clickhouse::ServerOptions{.url = flags.url, .ca_file = flags.ca});
  return clickhouse::BuildFleetReport(client, *table, selection, extras);
}

}  // namespace ntprof::cli
