#!/bin/bash
# A ClickHouse shard away for a while: the collector holds the rows, retries with backoff and
# delivers them once the shard is back (inserts into the Distributed table are synchronous, so a
# batch counts as accepted only when every shard has its rows). With a tiny --clickhouse-queue the
# rows that do not fit are dropped and counted in /metrics; the session keeps its
# clickhouse.pending marker, and the next start of the collector reloads it from its files.
# Bad input: an unreachable ClickHouse is a warning for the collector and exit 1 for ntprofctl.
#   fleet_outage_test.sh NTPROFCTL NTPROF_COLLECTOR FLEET_AGENT
set -uo pipefail
ctl=$1 collector=$2 agent=$3
here=$(dirname "$0")
# shellcheck source=clickhouse_servers.sh
source "$here/clickhouse_servers.sh"

start_sharded_store "$collector" || exit 1
metric() {  # PORT NAME -> value
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# 1. Shard 2 stops for ~6 s in the middle of a session.
m1=$(free_port)
start_collector c1 --metrics-listen "127.0.0.1:$m1" --join-window 3 --clickhouse "${CH_URL[1]}" \
  --clickhouse-batch 100 || exit 1
s1=$COLLECTOR_SOCK
start_agents "$s1" outage 1 1500 8 || exit 1
"$ctl" start outage -s 10 --collector "$s1" >/dev/null || fail "start outage"
sleep 2
stop_clickhouse 2
ok "shard 2 stopped"
wait_for 15 "failed inserts to be counted" \
  bash -c "[ \"\$(curl -s http://127.0.0.1:$m1/metrics | awk '\$1 == \"ntprof_collector_clickhouse_insert_failures_total\" { print \$2 }')\" -gt 0 ]"
sleep 3
held=$(metric "$m1" ntprof_collector_clickhouse_queued_rows)
ok "collector holds $held rows, $(metric "$m1" ntprof_collector_clickhouse_insert_failures_total) inserts failed so far"
restart_clickhouse 2 || exit 1
ok "shard 2 back"
wait_for 30 "the agents to send everything" grep -q sent "$work/agent1.log"
"$ctl" stop outage --collector "$s1" >/dev/null
final="SELECT count() FROM ntprof.commands FINAL WHERE session = 'outage'"
wait_for 40 "1500 rows after the outage" answer_is 1 "$final" 1500 &&
  ok "every command arrived after the outage: $(chq 1 "$final") rows, dropped $(metric "$m1" ntprof_collector_clickhouse_rows_dropped_total)"
[ "$(metric "$m1" ntprof_collector_clickhouse_rows_dropped_total)" = 0 ] || fail "rows dropped with a large queue"

# 2. A queue of 50 rows while shard 2 is away: drops are counted, the marker stays, a restart of
# the collector (shard back) reloads the session.
m2=$(free_port)
tiny=(--metrics-listen "127.0.0.1:$m2" --join-window 3 --clickhouse "${CH_URL[1]}"
      --clickhouse-queue 50 --clickhouse-batch 20)
stop_clickhouse 2
start_collector c2 "${tiny[@]}" || exit 1
s2=$COLLECTOR_SOCK
start_agents "$s2" tiny 2 600 2 || exit 1
"$ctl" start tiny -s 10 --collector "$s2" >/dev/null || fail "start tiny"
wait_for 30 "pair 2 to send everything" grep -q sent "$work/agent2.log"
"$ctl" stop tiny --collector "$s2" >/dev/null
wait_for 10 "drops to be counted" \
  bash -c "[ \"\$(curl -s http://127.0.0.1:$m2/metrics | awk '\$1 == \"ntprof_collector_clickhouse_rows_dropped_total\" { print \$2 }')\" -gt 0 ]" &&
  ok "queue of 50: $(metric "$m2" ntprof_collector_clickhouse_rows_dropped_total) rows dropped and counted in /metrics"
[ -e "$work/c2/sessions/tiny/clickhouse.pending" ] && ok "session tiny keeps its clickhouse.pending marker" ||
  fail "no marker after drops"
restart_clickhouse 2 || exit 1
kill "$COLLECTOR_PID"; wait "$COLLECTOR_PID" 2>/dev/null
start_collector c2 "${tiny[@]}" || exit 1
tiny_final="SELECT count() FROM ntprof.commands FINAL WHERE session = 'tiny'"
wait_for 30 "the reload to deliver session tiny" answer_is 1 "$tiny_final" 600 &&
  ok "after a restart of the collector, the reload delivered all 600 commands of session tiny"
wait_for 20 "the marker to go" test ! -e "$work/c2/sessions/tiny/clickhouse.pending" &&
  ok "clickhouse.pending removed"

# 3. Bad input.
start_collector c3 --metrics-listen "" --clickhouse http://127.0.0.1:1 || fail "collector with an unreachable ClickHouse did not start"
grep -q "ClickHouse at http://127.0.0.1:1" "$work/c3.log" &&
  ok "unreachable ClickHouse at start: a warning, the collector serves: $(grep -o 'ClickHouse at http://127.0.0.1:1[^;]*' "$work/c3.log" | head -1)"
kill "$COLLECTOR_PID"; wait "$COLLECTOR_PID" 2>/dev/null
out=$("$collector" --clickhouse ftp://x --data-dir "$work/c4" --metrics-listen "" 2>&1)
[ $? = 2 ] && ok "--clickhouse ftp://x: exit 2, $out" || fail "--clickhouse ftp://x: $out"
out=$("$ctl" report --clickhouse http://127.0.0.1:1 2>&1)
[ $? = 1 ] && grep -q "ClickHouse at http://127.0.0.1:1" <<<"$out" &&
  ok "ntprofctl report from an unreachable ClickHouse: exit 1, $out" || fail "report, unreachable: $out"

[ "$failures" = 0 ] && echo "all fleet outage checks passed" || grep -h "ClickHouse" "$work"/c*.log | head -8
exit "$failures"
