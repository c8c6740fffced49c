// The fleet store's table: one ReplacingMergeTree per server (or per shard), keyed on
// (session, command_key) so a replayed row replaces its earlier copy (docs/fleet.md). The SQL is
// what ClickHouse 18.16 accepts and current releases still do.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ntprof::clickhouse {

// "ntprof.commands" -> {"ntprof", "commands"}; "commands" -> {"ntprof", "commands"}.
struct TableName {
  std::string database;
  std::string table;
  std::string Qualified() const { return database + "." + table; }
};
absl::StatusOr<TableName> ParseTableName(const std::string& text);

// CREATE DATABASE IF NOT EXISTS and CREATE TABLE IF NOT EXISTS of the local table.
std::vector<std::string> CreateStatements(const TableName& table);

// The query that lists a table's column names, one per line (system.columns).
std::string ColumnNamesQuery(const TableName& table);

// ALTER TABLE ... ADD COLUMN for each column this version writes that a table made by an older
// one lacks (`existing`: its column names). Rows name their columns, so the added ones may come
// last. ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: hence the list of what is there.
std::vector<std::string> AddMissingColumnStatements(const TableName& table,
                                                    const std::set<std::string>& existing);
}  // namespace ntprof::clickhouse
