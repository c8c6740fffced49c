// report and compare from the fleet store (--clickhouse URL): the flags that select commands
// (sessions, a time range, subsystem, host, target, I/O class) and the report of a selection.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleet_report.h"

namespace ntprof::cli {

struct FleetFlags {
  std::string url;  // --clickhouse; empty: not from the fleet store
  std::string ca;
  std::string table = "ntprof.commands";
  std::vector<std::string> sessions;
  std::string from, to;
  std::vector<std::string> subsystems, hosts, targets, classes;
};

// Adds --clickhouse, --clickhouse-ca, --clickhouse-table, --session, --from, --to, --subsystem,
// --host, --target, --class.
void AddFleetFlags(CLI::App* cmd, FleetFlags* flags);

// The selection the flags name (times parsed), with extra sessions and another time range.
absl::StatusOr<clickhouse::Selection> SelectionOf(const FleetFlags& flags,
                                                  const std::vector<std::string>& sessions,
                                                  const std::string& from, const std::string& to);

absl::StatusOr<Report> FleetReport(const FleetFlags& flags,
                                   const clickhouse::Selection& selection,
                                   ReportExtras extras = {});

}  // namespace ntprof::cli
