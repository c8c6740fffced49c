#!/bin/bash
# Records per second end to end into ClickHouse, printed, not asserted, in one run (under 2 minutes):
#  1. one collector without and with --clickhouse: a fleet_agent pair streams COMMANDS joined
#     commands unpaced (each batch of 20 acked before the next, as ntprofd's spool does);
#  2. one collector against two in a ring (--peer each other), both with --clickhouse into the
#     same server: ring_fleet's 8 hosts x 4 targets x SUBSYSTEMS subsystems, run by ntprofd's own
#     CollectorRing (spool and link per collector, records to their subsystem's owner), offer more
#     than the collectors take for SECONDS and are timed until every collector acked everything
#     and until every record is a row (joined: one row for two records) after FINAL;
#  3. one collector with 1 and with 2 join threads (--join-threads);
#  4. one ClickHouse server alone: the rows of 1-2 inserted again in the collector's batches.
# Then what one row costs on disk (system.parts) and a report from ClickHouse.
#   fleet_bench.sh NTPROFCTL NTPROF_COLLECTOR FLEET_AGENT RING_FLEET [COMMANDS [SECONDS [SUBSYSTEMS]]]
#   e.g. tests/bench/fleet_bench.sh build/client/ntprofctl build/collector/ntprof-collector \
#        build/tests/fleet/fleet_agent build/tests/ring/ring_fleet 20000 4 128
set -uo pipefail
ctl=$1 collector=$2 agent=$3 ring_fleet=$4 commands=${5:-20000} seconds=${6:-4} subsystems=${7:-128}
hosts=8 targets=4
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
  kill "$COLLECTOR_PID" 2>/dev/null; wait "$COLLECTOR_PID" 2>/dev/null
  echo "$(echo "$acked - $t0" | bc) $(echo "$rows - $t0" | bc)"
}

# ring SESSION N ARGS...: N collectors on a ring (each --peer the others, each with --clickhouse
# and ARGS), ring_fleet's agents on it; -> "records seconds_to_ack seconds_to_rows".
ring() {
  local session=$1 n=$2; shift 2
  local socks=() cpids=() i j
  for i in $(seq "$n"); do socks+=("unix:$work/$session-c$i.sock"); done
  printf '%s\n' "${socks[@]}" >"$work/$session.ring"
  for i in $(seq "$n"); do
    local peers=()
    for j in $(seq "$n"); do [ "$j" = "$i" ] || peers+=(--peer "${socks[$((j - 1))]}"); done
    start_collector "$session-c$i" --metrics-listen "" --clickhouse "${CH_URL[1]}" "${peers[@]}" "$@" ||
      exit 1
    cpids+=("$COLLECTOR_PID")
  done
  "$ring_fleet" stream "$work/$session.ring" "$work/$session-spool" "$work/$session-out" "$session" \
      "$seconds" "$hosts" "$targets" "$subsystems" >"$work/$session.log" 2>&1 &
  local fleet=$!
  pids+=("$fleet")
  wait_for 30 "ring_fleet's agents to connect to $n collector(s)" \
    bash -c "[ \$('$ctl' status --collector '${socks[0]}' | grep -c 'acked seq') -ge $(((hosts + targets) * n)) ]" ||
    exit 1
  local t0; t0=$(now)
  "$ctl" start "$session" -s 1 --collector "${socks[0]}" >/dev/null
  until grep -q '^sent ' "$work/$session.log"; do
    kill -0 "$fleet" 2>/dev/null || { echo "ring_fleet failed: $(tail -3 "$work/$session.log")" >&2; break; }
    sleep 0.05
  done
  local acked; acked=$(now)
  local sent; sent=$(sed -n 's/^sent //p' "$work/$session.log")
  # A joined row holds two records, a half left unmatched one.
  local deadline=$((SECONDS + 120))
  until [ "$(chq 1 "SELECT sum(if(matched, 2, 1)) FROM ntprof.commands FINAL WHERE session = '$session'")" = "$sent" ]; do
    [ $SECONDS -lt $deadline ] || { echo "$session: not every record in ClickHouse after 120 s" >&2; break; }
    sleep 0.1
  done
  local rows; rows=$(now)
  "$ctl" stop "$session" --collector "${socks[0]}" >/dev/null
  kill "$fleet" "${cpids[@]}" 2>/dev/null; wait "$fleet" "${cpids[@]}" 2>/dev/null
  echo "$sent $(echo "$acked - $t0" | bc) $(echo "$rows - $t0" | bc)"
}

rate() { echo "scale=0; $1 / $2" | bc; }
ratio() { printf '%.2f' "$(echo "scale=3; $1 / $2" | bc)"; }
version=$(chq 1 'SELECT version()')

read -r plain_ack _ < <(run plain plain 1)
read -r ch_ack ch_rows < <(run ch fleet 2 --clickhouse "${CH_URL[1]}")
records=$((commands * 2))
echo "== 1. one collector, one fleet_agent pair, $commands commands ($records host and target records), clickhouse-server $version"
printf '%-44s %8s %10s %7s\n' "" "seconds" "records/s" "ratio"
printf '%-44s %8.2f %10s %7s\n' "without ClickHouse: all acked" "$plain_ack" "$(rate $records "$plain_ack")" 1.00
printf '%-44s %8.2f %10s %7s\n' "with ClickHouse: all acked" "$ch_ack" "$(rate $records "$ch_ack")" "$(ratio "$plain_ack" "$ch_ack")"
printf '%-44s %8.2f %10s %7s\n' "with ClickHouse: every row in it" "$ch_rows" "$(rate $records "$ch_rows")" "$(ratio "$plain_ack" "$ch_rows")"

offered=$((hosts * targets * subsystems * 2 * 10))
echo "== 2. ring_fleet: $hosts hosts x $targets targets x $subsystems subsystems for ${seconds} s (offered $offered records/s), every collector --clickhouse"
read -r r1_sent r1_ack r1_rows < <(ring ring1 1)
read -r r2_sent r2_ack r2_rows < <(ring ring2 2)
base_ack=$(rate "$r1_sent" "$r1_ack") base_rows=$(rate "$r1_sent" "$r1_rows")
printf '%-44s %8s %10s %7s\n' "" "seconds" "records/s" "ratio"
row() {  # LABEL SENT SECONDS BASE_RATE
  local r; r=$(rate "$2" "$3")
  printf '%-44s %8.2f %10s %7s\n' "$1" "$3" "$r" "$(ratio "$r" "$4")"
}
row "1 collector: all acked ($r1_sent records)" "$r1_sent" "$r1_ack" "$base_ack"
row "1 collector: every record a row in it" "$r1_sent" "$r1_rows" "$base_rows"
row "2 collectors, a ring: all acked" "$r2_sent" "$r2_ack" "$base_ack"
row "2 collectors, a ring: every record a row" "$r2_sent" "$r2_rows" "$base_rows"

echo "== 3. join threads"
read -r j1_sent j1_ack j1_rows < <(ring join1 1 --join-threads 1)
read -r j2_sent j2_ack j2_rows < <(ring join2 1 --join-threads 2)
j_ack=$(rate "$j1_sent" "$j1_ack") j_rows=$(rate "$j1_sent" "$j1_rows")
printf '%-44s %8s %10s %7s\n' "" "seconds" "records/s" "ratio"
row "1 collector, 1 join thread: all acked" "$j1_sent" "$j1_ack" "$j_ack"
row "1 collector, 2 join threads: all acked" "$j2_sent" "$j2_ack" "$j_ack"
row "1 collector, 1 join thread: every row" "$j1_sent" "$j1_rows" "$j_rows"
row "1 collector, 2 join threads: every row" "$j2_sent" "$j2_rows" "$j_rows"

echo "== 4. one ClickHouse shard alone: every row above inserted again over HTTP, in batches of 10,000"
echo "   (the collector's --clickhouse-batch), one insert at a time, into a copy of the table"
chq 1 "CREATE TABLE ntprof.reinsert AS ntprof.commands" >/dev/null
chq 1 "SELECT * FROM ntprof.commands FORMAT TabSeparated" >"$work/rows.tsv"
split -l 10000 "$work/rows.tsv" "$work/chunk."
t0=$(now)
for f in "$work"/chunk.*; do
  curl -sf --data-binary @"$f" "${CH_URL[1]}/?query=INSERT%20INTO%20ntprof.reinsert%20FORMAT%20TabSeparated" ||
    echo "insert of $f failed"
done
t1=$(now)
n=$(chq 1 "SELECT count() FROM ntprof.reinsert")
echo "   $n rows in $(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s = $(rate "$n" "$(echo "$t1 - $t0" | bc)") rows/s"
chq 1 "DROP TABLE ntprof.reinsert" >/dev/null

echo "== on disk (system.parts of ntprof.commands, active parts, after OPTIMIZE ... FINAL)"
chq 1 "OPTIMIZE TABLE ntprof.commands FINAL" >/dev/null
chq 1 "SELECT sum(rows) AS total_rows, sum(bytes_on_disk) AS total_bytes,
              round(total_bytes / total_rows, 1) AS bytes_per_row,
              round(sum(data_uncompressed_bytes) / total_rows, 1) AS uncompressed_per_row
       FROM system.parts WHERE database = 'ntprof' AND table = 'commands' AND active
       FORMAT PrettyCompactNoEscapes"
# ring_fleet's wall clock starts at 2025-06-15T15:06:40Z: its second second, one subsystem.
report=(report --clickhouse "${CH_URL[1]}" --from 2025-06-15T15:06:41Z --to 2025-06-15T15:06:42Z
        --subsystem nqn.2026-01.io.ntprof:target1-subsys1)
echo "== ntprofctl ${report[*]}"
"$ctl" "${report[@]}"
echo "== bounds: collectors, agents and ClickHouse share this machine's $(nproc) cores (and whatever"
echo "   else runs on it); synthetic agents keep one batch in flight per link, so these are lower"
echo "   bounds of what a collector or a shard takes on machines of their own. On shared cores a"
echo "   second collector cannot add rate: the ring rows show what the ring costs, not how it scales."
