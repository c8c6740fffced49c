#!/bin/bash
# Two ClickHouse shards (two clickhouse-server processes, a Distributed table over both), two
# collectors writing into it, each with its own agents, one session name across the fleet:
# `ntprofctl report --clickhouse` equals the file report of the union of the runs the agents
# streamed (stages, components, percentiles, record counts), and each filter (host, class, time
# range) selects what it says.
#   fleet_report_test.sh NTPROFCTL NTPROF_COLLECTOR FLEET_AGENT
set -uo pipefail
ctl=$1 collector=$2 agent=$3
here=$(dirname "$0")
# shellcheck source=clickhouse_servers.sh
source "$here/clickhouse_servers.sh"

start_sharded_store "$collector" || exit 1

start_collector c1 --metrics-listen "" --join-window 3 --clickhouse "${CH_URL[1]}" || exit 1
s1=$COLLECTOR_SOCK
# Collector 2 joins on 2 threads: its rows must be the same as one thread's would be.
start_collector c2 --metrics-listen "" --join-window 3 --clickhouse "${CH_URL[2]}" --join-threads 2 || exit 1
s2=$COLLECTOR_SOCK
start_agents "$s1" fleet 1 600 2 || exit 1
start_agents "$s2" fleet 2 400 2 || exit 1
"$ctl" start fleet -s 10 --collector "$s1" >/dev/null || fail "start fleet on collector 1"
"$ctl" start fleet -s 10 --collector "$s2" >/dev/null || fail "start fleet on collector 2"
wait_for 30 "pair 1 to send everything" grep -q sent "$work/agent1.log"
wait_for 30 "pair 2 to send everything" grep -q sent "$work/agent2.log"
"$ctl" stop fleet --collector "$s1" >/dev/null
"$ctl" stop fleet --collector "$s2" >/dev/null
count="SELECT count() FROM ntprof.commands FINAL WHERE session = 'fleet'"
wait_for 20 "1000 rows in ClickHouse" answer_is 1 "$count" 1000 &&
  ok "1000 joined commands in ClickHouse, $(chq 1 "SELECT count() FROM ntprof.commands_local") on shard 1, $(chq 2 "SELECT count() FROM ntprof.commands_local") on shard 2"

files=("$work/run1/host1.ntp" "$work/run1/target1.ntp" "$work/run2/host2.ntp" "$work/run2/target2.ntp")
"$ctl" report "${files[@]}" -o json >"$work/files.json" || fail "file report"
"$ctl" report --clickhouse "${CH_URL[1]}" fleet -o json >"$work/fleet.json" || fail "report --clickhouse"
# The collector's own files of the session carry each agent's name and clock, as ntprofd's do.
"$ctl" report "$work"/c1/sessions/fleet/*.ntp "$work"/c2/sessions/fleet/*.ntp --slowest 5 -o json \
  >"$work/files-slowest.json"
"$ctl" report --clickhouse "${CH_URL[1]}" fleet --slowest 5 -o json >"$work/fleet-slowest.json" &&
  "$here/compare_reports.py" "$work/fleet-slowest.json" "$work/files-slowest.json" &&
  ok "--slowest 5 = that of the collectors' files of the session: the same commands, stages and wall times"
"$here/compare_reports.py" "$work/fleet.json" "$work/files.json" &&
  ok "report from ClickHouse (both collectors) = the file report of the four files"
"$ctl" report --clickhouse "${CH_URL[2]}" -o json >"$work/fleet-any.json" &&
  "$here/compare_reports.py" "$work/fleet-any.json" "$work/files.json" &&
  ok "the same through the other shard's server, without naming the session"

"$ctl" report "${files[@]:0:2}" -o json >"$work/files1.json" || fail "file report of pair 1"
"$ctl" report --clickhouse "${CH_URL[1]}" --session fleet --host host1 -o json >"$work/host1.json" &&
  "$here/compare_reports.py" "$work/host1.json" "$work/files1.json" &&
  ok "--host host1 = the file report of collector 1's run"
"$ctl" report --clickhouse "${CH_URL[1]}" --subsystem nqn.2024-01.io.ntprof:array2 --target target2 \
  -o json >"$work/array2.json" &&
  "$ctl" report "${files[@]:2:2}" -o json >"$work/files2.json" &&
  "$here/compare_reports.py" "$work/array2.json" "$work/files2.json" &&
  ok "--subsystem ...:array2 --target target2 = the file report of collector 2's run"
"$ctl" report --clickhouse "${CH_URL[1]}" --class write -o json >"$work/writes.json" &&
  "$here/compare_reports.py" "$work/writes.json" "$work/files.json" --groups-only --op write &&
  ok "--class write = the write groups of the file report"
now=$(date -u +%s)
"$ctl" report --clickhouse "${CH_URL[1]}" --from $((now - 3600)) --to $((now + 60)) -o json \
  >"$work/range.json" && "$here/compare_reports.py" "$work/range.json" "$work/files.json" &&
  ok "--from an hour ago --to now: every command"
out=$("$ctl" report --clickhouse "${CH_URL[1]}" --to 2020-01-01T00:00:00Z 2>&1)
[ $? = 2 ] && grep -q "no commands" <<<"$out" && ok "a range without commands: exit 2, $out" ||
  fail "empty range: $out"
text=$("$ctl" report --clickhouse "${CH_URL[1]}" fleet --detail --slowest 3 2>&1)
grep -q "largest: storage" <<<"$text" && grep -q "slowest" <<<"$text" &&
  ok "text report with --detail --slowest from ClickHouse" || fail "text report: $text"
"$ctl" compare --clickhouse "${CH_URL[1]}" --base-from $((now - 3600)) --base-to $((now + 60)) \
  --from $((now - 3600)) --to $((now + 60)) | grep -q "read 4KiB" &&
  ok "compare --clickhouse of two time ranges" || fail "compare --clickhouse"

[ "$failures" = 0 ] && echo "all fleet report checks passed"
exit "$failures"
