#!/bin/bash
# Records per second through the collector into ClickHouse, end to end, against the same collector
# without --clickhouse, in one run: a fleet_agent pair streams COMMANDS joined commands unpaced
# (each batch of 20 acked before the next, as ntprofd's spool does); timed until the agents have
# every ack, and with ClickHouse until every row is there after FINAL. Printed, not asserted.
#   fleet_bench.sh NTPROFCTL NTPROF_COLLECTOR FLEET_AGENT [COMMANDS]
#   e.g. tests/bench/fleet_bench.sh build/client/ntprofctl build/collector/ntprof-collector \
#        build/tests/fleet/fleet_agent 20000
set -uo pipefail
ctl=$1 collector=$2 agent=$3 commands=${4:-20000}
# shellcheck source=../fleet/clickhouse_servers.sh
source "$(dirname "$0")/../fleet/clickhouse_servers.sh"
start_clickhouse_shards 1 || exit 1

now() { date +%s.%N; }
run() {  # NAME SESSION PAIR ARGS... -> "seconds_to_ack seconds_to_rows"
  local name=$1 session=$2 pair=$3; shift 3
  start_collector "$name" --metrics-listen "" "$@" || exit 1
  start_agents "$COLLECTOR_SOCK" "$session" "$pair" "$commands" 0 || exit 1
  local t0; t0=$(now)
  "$ctl" start "$session" -s 10 --collector "$COLLECTOR_SOCK" >/dev/null
  until grep -q sent "$work/agent$pair.log"; do sleep 0.05; done
  local acked; acked=$(now)
  local rows=$acked
  if [ $# -gt 0 ]; then
    until [ "$(chq 1 "SELECT count() FROM ntprof.commands FINAL WHERE session = '$session'")" = "$commands" ]; do
      sleep 0.05
    done
    rows=$(now)
  fi
  echo "$(echo "$acked - $t0" | bc) $(echo "$rows - $t0" | bc)"
}
read -r plain_ack _ < <(run plain plain 1)
read -r ch_ack ch_rows < <(run ch fleet 2 --clickhouse "${CH_URL[1]}")
rate() { echo "scale=0; $commands * 2 / $1" | bc; }
echo "clickhouse-server $(chq 1 'SELECT version()'); $commands commands (host and target records each)"
printf '%-38s %10s %12s\n' "" "seconds" "records/s"
printf '%-38s %10.2f %12s\n' "without ClickHouse: all acked" "$plain_ack" "$(rate "$plain_ack")"
printf '%-38s %10.2f %12s\n' "with ClickHouse: all acked" "$ch_ack" "$(rate "$ch_ack")"
printf '%-38s %10.2f %12s\n' "with ClickHouse: every row in it" "$ch_rows" "$(rate "$ch_rows")"
echo "ratio (records/s into ClickHouse end to end / without): $(echo "scale=2; $plain_ack / $ch_rows" | bc)"
echo "ratio (ack rate with / without ClickHouse): $(echo "scale=2; $plain_ack / $ch_ack" | bc)"
