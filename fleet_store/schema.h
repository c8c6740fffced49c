// The fleet store's table: one ReplacingMergeTree per server (or per shard), keyed on
// (session, command_key) so a replayed row replaces its earlier copy (docs/fleet.md). The SQL is
// what ClickHouse 18.16 accepts and current releases still do.
#pragma once

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
}  // namespace ntprof::clickhouse
