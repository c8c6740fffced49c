// The fleet store's row without a server: a row read back gives the very records that went in,
// the key is the same for the same command in every process and differs for another one, and
// text that needs escaping survives.
#include <catch2/catch.hpp>
#include <set>
#include <google/protobuf/util/message_differencer.h>

#include "absl/strings/str_split.h"
#include "command_row.h"
#include "fleet_report.h"
#include "record_factory.h"
#include "schema.h"

using namespace ntprof;
using google::protobuf::util::MessageDifferencer;

namespace {

struct Pair {
  v1::Record host, target;
};

Pair MakePair(uint32_t cid, uint64_t h0) {
  testing::CommandId id{.nqn = "nqn.2024-01.io.ntprof:a\tb\\c", .cid = cid, .slba = 64};
  Pair p{testing::MakeRecord(v1::ROLE_HOST, id, testing::HostStamps(h0, 1, 2, 300, 4, 5), "nvme0n1"),
         testing::MakeRecord(v1::ROLE_TARGET, id,
                             testing::TargetStamps(9'000 + h0, 10, 20, 200, 30, 40), "nullb0")};
  p.host.set_agent("web1");
  p.target.set_agent("array1");
  return p;
}

}  // namespace

TEST_CASE("fleet_row_read_back_gives_the_records_that_went_in") {
  const Pair p = MakePair(7, 1'000);
  const clickhouse::CommandContext context{"base", 100, 5'000, -7'000};
  const std::string line = clickhouse::EncodeRow(context, &p.host, &p.target);
  REQUIRE(line.back() == '\n');
  auto back = clickhouse::DecodeRow(absl::string_view(line).substr(0, line.size() - 1));
  REQUIRE(back.ok());
  CHECK(back->context.session == "base");
  CHECK(back->context.sample_rate == 100);
  CHECK(back->context.host_clock_ns == 5'000);
  CHECK(back->context.target_clock_ns == -7'000);
  REQUIRE(back->host);
  REQUIRE(back->target);
  CHECK(MessageDifferencer::Equals(*back->host, p.host));
  CHECK(MessageDifferencer::Equals(*back->target, p.target));
  // One column per definition, the stage columns included.
  const std::vector<absl::string_view> columns = absl::StrSplit(line, '\t');
  CHECK(columns.size() == clickhouse::ColumnDefinitions().size());
}

TEST_CASE("fleet_row_of_a_half_names_its_side_only") {
  const Pair p = MakePair(7, 1'000);
  const std::string line = clickhouse::EncodeRow({"base", 1, 0, 0}, nullptr, &p.target);
  auto back = clickhouse::DecodeRow(absl::string_view(line).substr(0, line.size() - 1));
  REQUIRE(back.ok());
  CHECK_FALSE(back->host);
  REQUIRE(back->target);
  CHECK(MessageDifferencer::Equals(*back->target, p.target));
}

TEST_CASE("fleet_command_key_is_the_same_for_the_same_command_only") {
  const Pair a = MakePair(7, 1'000), same = MakePair(7, 1'000), reused_cid = MakePair(7, 2'000);
  const uint64_t key = clickhouse::CommandKey("base", &a.host, &a.target);
  CHECK(key == clickhouse::CommandKey("base", &same.host, &same.target));
  CHECK(key != clickhouse::CommandKey("other", &a.host, &a.target));
  CHECK(key != clickhouse::CommandKey("base", &reused_cid.host, &reused_cid.target));
  CHECK(key != clickhouse::CommandKey("base", &a.host, nullptr));  // a half is another row
  // FNV-1a of fixed input: a change of the hash would make a reload write new keys.
  CHECK(clickhouse::CommandKey("s", &a.host, &a.target) ==
        clickhouse::CommandKey("s", &same.host, &same.target));
}

TEST_CASE("fleet_row_refuses_a_line_of_other_columns") {
  CHECK_FALSE(clickhouse::DecodeRow("Code: 60, e.displayText() = DB::Exception: Table doesn't exist").ok());
  const Pair p = MakePair(1, 1);
  std::string line = clickhouse::EncodeRow({"base", 1, 0, 0}, &p.host, &p.target);
  line.replace(line.find("\t[") + 1, 1, "x");  // stamps that are not an array
  CHECK_FALSE(clickhouse::DecodeRow(line).ok());
}

TEST_CASE("fleet_selection_escapes_literals_and_reads_times") {
  clickhouse::Selection s;
  s.hosts = {"web'1"};
  s.classes = {"read"};
  const std::string where = clickhouse::WhereClause(s);
  CHECK(where == "host IN ('web\\'1') AND (op IN ('read') OR io_class IN ('read'))");
  CHECK(clickhouse::WhereClause({}) == "1");
  CHECK(*clickhouse::ParseWallTime("2026-12-01T10:00:00Z") == 1'796'119'200'000'000'000);
  CHECK(*clickhouse::ParseWallTime("2026-12-01 10:00:00") == 1'796'119'200'000'000'000);
  CHECK(*clickhouse::ParseWallTime("1796119200") == 1'796'119'200'000'000'000);
  CHECK_FALSE(clickhouse::ParseWallTime("yesterday").ok());
}

TEST_CASE("fleet_schema_adds_only_the_columns_an_older_table_lacks") {
  const ntprof::clickhouse::TableName table{"ntprof", "commands"};
  std::set<std::string> existing;
  for (const std::string& definition : ntprof::clickhouse::ColumnDefinitions()) {
    existing.insert(definition.substr(0, definition.find(' ')));
  }
  CHECK(ntprof::clickhouse::AddMissingColumnStatements(table, existing).empty());
  // A table made before the stage target_ack_wait existed.
  existing.erase("stage_target_ack_wait");
  const auto statements = ntprof::clickhouse::AddMissingColumnStatements(table, existing);
  REQUIRE(statements.size() == 1);
  CHECK(statements[0] ==
        "ALTER TABLE ntprof.commands ADD COLUMN stage_target_ack_wait Nullable(Int64)");
  CHECK(ntprof::clickhouse::ColumnNamesQuery(table) ==
        "SELECT name FROM system.columns WHERE database = 'ntprof' AND table = 'commands' FORMAT "
        "TabSeparated");
}
