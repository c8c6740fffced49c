#include "schema.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "command_row.h"

namespace ntprof::clickhouse {

absl::StatusOr<TableName> ParseTableName(const std::string& text) {
  static const std::regex kName("(?:([A-Za-z_][A-Za-z0-9_]*)\\.)?([A-Za-z_][A-Za-z0-9_]*)");
  std::smatch m;
  if (!std::regex_match(text, m, kName)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table '", text, "': expected DATABASE.TABLE or TABLE (letters, digits, underscores)"));
  }
  return TableName{m[1].matched ? m[1].str() : "ntprof", m[2].str()};
}

std::vector<std::string> CreateStatements(const TableName& table) {
  return {
      absl::StrCat("CREATE DATABASE IF NOT EXISTS ", table.database),
      absl::StrCat("CREATE TABLE IF NOT EXISTS ", table.Qualified(), " (\n    ",
                   absl::StrJoin(ColumnDefinitions(), ",\n    "),
                   ",\n    wall_time DateTime DEFAULT toDateTime(intDiv(wall_ns, 1000000000))\n"
                   ") ENGINE = ReplacingMergeTree()\n"
                   "PARTITION BY toYYYYMMDD(wall_time)\n"
                   "ORDER BY (session, command_key)"),
  };
}

std::string ColumnNamesQuery(const TableName& table) {
  // The names were checked by ParseTableName: letters, digits and underscores, nothing to escape.
  return absl::StrCat("SELECT name FROM system.columns WHERE database = '", table.database,
                      "' AND table = '", table.table, "' FORMAT TabSeparated");
}

std::vector<std::string> AddMissingColumnStatements(const TableName& table,
                                                    const std::set<std::string>& existing) {
  std::vector<std::string> out;
  for (const std::string& definition : ColumnDefinitions()) {
    const std::string name = definition.substr(0, definition.find(' '));
    if (existing.count(name) == 0) {
      out.push_back(absl::StrCat("ALTER TABLE ", table.Qualified(), " ADD COLUMN ", definition));
    }
  }
  return out;
}

}  // namespace ntprof::clickhouse
