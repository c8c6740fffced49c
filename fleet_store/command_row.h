// One row of the fleet store per sampled command: a joined pair, or a half that stayed unmatched
// (docs/fleet.md). The row carries both halves' raw stamps, so a report rebuilds the very records
// the join paired and runs the same report code as a file report; the stage and component columns
// beside them are for ad-hoc SQL only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::clickhouse {

// What a row needs besides the records: which session, how it was sampled, and each agent's wall
// clock minus its monotonic clock (from its file header), so that reports place commands in time.
struct CommandContext {
  std::string session;
  uint32_t sample_rate = 1;
  int64_t host_clock_ns = 0;
  int64_t target_clock_ns = 0;
};

// The table's columns in the order EncodeRow writes them (TabSeparated), "name Type" each.
const std::vector<std::string>& ColumnDefinitions();
// "session, wall_ns, ...": the column list of INSERT and SELECT (wall_time is computed).
std::string ColumnList();

// Deterministic 64-bit identity of a command: the same pair (or half) gives the same key in every
// process and on every replay, so ReplacingMergeTree keeps one row of it.
uint64_t CommandKey(const std::string& session, const v1::Record* host, const v1::Record* target);

// One TabSeparated line (with its newline). host and/or target must be given.
std::string EncodeRow(const CommandContext& context, const v1::Record* host,
                      const v1::Record* target);

// A row read back: the halves as the join saw them.
struct StoredCommand {
  CommandContext context;
  std::optional<v1::Record> host;
  std::optional<v1::Record> target;
};
absl::StatusOr<StoredCommand> DecodeRow(absl::string_view line);

// TabSeparated escaping of a String value (backslash, tab, newline).
std::string EscapeTsv(absl::string_view text);

}  // namespace ntprof::clickhouse
