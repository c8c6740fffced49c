// Reports from the fleet store: the rows a selection matches (deduplicated with FINAL), turned
// back into the records the join paired and fed to core's ReportBuilder, so the stage numbers are
// those of the file report of the same records (docs/fleet.md says what is not in the store).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "http_client.h"
#include "report.h"
#include "report_builder.h"
#include "schema.h"

namespace ntprof::clickhouse {

// Which commands: every filter given must hold; repeated values of one filter are alternatives.
struct Selection {
  std::vector<std::string> sessions;
  std::optional<int64_t> from_ns;  // wall time of the command's first stamp, [from, to)
  std::optional<int64_t> to_ns;
  std::vector<std::string> subsystems;  // NQN
  std::vector<std::string> hosts;       // host agent
  std::vector<std::string> targets;     // target agent
  std::vector<std::string> classes;     // "read" (op) or "read-4KiB" (op and size)

  std::string Describe() const;  // "session base, 2026-12-01T10:00:00Z..., host web1"
};

// The WHERE clause of a selection (with literals escaped), "1" when nothing is selected.
std::string WhereClause(const Selection& selection);

absl::StatusOr<Report> BuildFleetReport(HttpClient& client, const TableName& table,
                                        const Selection& selection, ReportExtras extras = {});

// "2026-12-01T10:00:00Z", "2026-12-01 10:00:00" (UTC), or whole seconds since the epoch ->
// nanoseconds since the epoch.
absl::StatusOr<int64_t> ParseWallTime(const std::string& text);

}  // namespace ntprof::clickhouse
