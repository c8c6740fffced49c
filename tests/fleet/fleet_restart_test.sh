#!/bin/bash
# Nothing lost, nothing twice through ClickHouse: the collector is killed with SIGKILL in the
# middle of a session and started again on its data directory while the agents replay what it had
# not acked. It reloads the running session from its files into ClickHouse; ClickHouse keeps one
# row per command key: every command once (after FINAL), joined, none twice, and the report from
# ClickHouse equals the file report of what the agents sent. The table is made first as an older
# ntprof made it (without the column of a stage added since): the collector adds the column.
#   fleet_restart_test.sh NTPROFCTL NTPROF_COLLECTOR FLEET_AGENT
set -uo pipefail
ctl=$1 collector=$2 agent=$3
here=$(dirname "$0")
# shellcheck source=clickhouse_servers.sh
source "$here/clickhouse_servers.sh"

start_clickhouse_shards 1 || exit 1
ok "clickhouse-server $(chq 1 'SELECT version()')"
# The table of an ntprof older than the stage target_ack_wait: the inserts name that column.
"$collector" --print-schema | grep -v stage_target_ack_wait |
  clickhouse-client --host 127.0.0.1 --port "${CH_TCP[1]}" --multiquery || fail "the older table"
ack_column="SELECT count() FROM system.columns WHERE database = 'ntprof' AND table = 'commands' AND name = 'stage_target_ack_wait'"
answer_is 1 "$ack_column" 0 || fail "the older table has stage_target_ack_wait already"
# On 2 join threads: the reload and the rows' tickets come from a thread other than the receiving one.
args=(--metrics-listen "" --join-window 3 --clickhouse "${CH_URL[1]}" --clickhouse-batch 200 --join-threads 2)
start_collector c "${args[@]}" || exit 1
sock=$COLLECTOR_SOCK
if wait_for 10 "the collector to add stage_target_ack_wait" answer_is 1 "$ack_column" 1; then
  grep -q "ClickHouse table ntprof.commands was made by an older ntprof: ALTER TABLE ntprof.commands ADD COLUMN stage_target_ack_wait Nullable(Int64)" "$work/c.log" &&
    ok "the older table got the column stage_target_ack_wait, and the log says so" ||
    fail "the collector's log does not say it added stage_target_ack_wait"
fi
start_agents "$sock" restart 1 3000 8 || exit 1
"$ctl" start restart -s 10 --collector "$sock" >/dev/null || fail "start"
rows="SELECT count() FROM ntprof.commands WHERE session = 'restart'"
wait_for 20 "the first rows" bash -c "[ \"\$(curl -s --data-binary \"$rows\" ${CH_URL[1]}/)\" -gt 300 ]"
kill -9 "$COLLECTOR_PID"; wait "$COLLECTOR_PID" 2>/dev/null
ok "collector killed (SIGKILL) with $(chq 1 "$rows") rows in ClickHouse, agents mid-stream"
[ -e "$work/c/sessions/restart/clickhouse.pending" ] && ok "the session's clickhouse.pending marker is there"
sleep 1
start_collector c "${args[@]}" || exit 1
grep -q "session restart: .* stored records reloaded into ClickHouse" "$work/c.log" &&
  ok "$(grep -o 'session restart: .* reloaded into ClickHouse' "$work/c.log")"
wait_for 40 "the agents to send everything" grep -q sent "$work/agent1.log"
"$ctl" stop restart --collector "$sock" >/dev/null
final="SELECT count() FROM ntprof.commands FINAL WHERE session = 'restart'"
wait_for 20 "3000 rows after FINAL" answer_is 1 "$final" 3000 &&
  ok "3000 commands in ClickHouse after FINAL ($(chq 1 "$rows") rows before ClickHouse merged the replayed copies)"
answer_is 1 "SELECT countIf(matched = 1) FROM ntprof.commands FINAL WHERE session = 'restart'" 3000 &&
  ok "every one joined (no half left over by the restart)" || fail "unmatched halves: $(chq 1 "SELECT side, count() FROM ntprof.commands FINAL WHERE session = 'restart' GROUP BY side")"
dups="SELECT count() FROM (SELECT command_key FROM ntprof.commands FINAL WHERE session = 'restart'
      GROUP BY command_key HAVING count() > 1)"
answer_is 1 "$dups" 0 && ok "no command key twice after FINAL" || fail "duplicate keys: $(chq 1 "$dups")"
answer_is 1 "SELECT uniqExact(host, host_stamps) FROM ntprof.commands FINAL WHERE session = 'restart'" 3000 &&
  ok "3000 distinct host records" || fail "distinct host records: $(chq 1 "SELECT uniqExact(host, host_stamps) FROM ntprof.commands FINAL WHERE session = 'restart'")"
"$ctl" report "$work/run1/host1.ntp" "$work/run1/target1.ntp" -o json >"$work/files.json"
"$ctl" report --clickhouse "${CH_URL[1]}" restart -o json >"$work/fleet.json" &&
  "$here/compare_reports.py" "$work/fleet.json" "$work/files.json" &&
  ok "report from ClickHouse = the file report of what the agents sent"
wait_for 20 "the marker to go once ClickHouse has every row" \
  test ! -e "$work/c/sessions/restart/clickhouse.pending" && ok "clickhouse.pending removed"

[ "$failures" = 0 ] && echo "all fleet restart checks passed"
exit "$failures"
