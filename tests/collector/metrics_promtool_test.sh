#!/bin/bash
# The collector's GET /metrics passes Debian's `promtool check metrics` (the exposition format and
# its lint: HELP and TYPE on every family, counter and unit suffixes), scraped from a real
# ntprof-collector while a session runs with two replaying agents, so every family has samples:
# counters, per-cause losses, the gauges the registry sets on its tick, and stage histograms.
#   metrics_promtool_test.sh NTPROFCTL NTPROF_COLLECTOR REPLAY_AGENT MAKE_TEST_RECORDINGS
set -uo pipefail
ctl=$1 collector=$2 replay=$3 make_recordings=$4
promtool=$(command -v promtool) || {
  echo "FAIL: promtool not found: deploy/install-deps.sh installs it (Debian package prometheus)"
  exit 1
}
# shellcheck source=harness.sh
source "$(dirname "$0")/harness.sh"

# GET /metrics over plain HTTP; prints the body (the headers end at the first empty line).
scrape() {
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  tr -d '\r' <&3 | sed '1,/^$/d'
  exec 3<&-
}

"$make_recordings" "$work/rec" || exit 1
sock="unix:$work/collector.sock"
export NTPROF_COLLECTOR=$sock
"$collector" --listen "$sock" --data-dir "$work/data" --metrics-listen localhost:0 \
  --log-level info >"$work/collector.log" 2>&1 &
pids+=($!)
port=""
for _ in $(seq 50); do
  port=$(sed -n 's/.*metrics on .* (port \([0-9]*\)).*/\1/p' "$work/collector.log")
  [ -n "$port" ] && break
  sleep 0.2
done
[ -n "$port" ] || { echo "FAIL: the collector never said its metrics port: $(cat "$work/collector.log")"; exit 1; }

replay_both_halves "$replay" "$sock"
# The recordings name their session "test" (make_test_recordings).
"$ctl" start test -s 60 >/dev/null || fail "start session"
for _ in $(seq 50); do grep -q sent "$work/host.log" && grep -q sent "$work/target.log" && break; sleep 0.2; done

# The gauges are set on the registry's tick (1 s): wait for the first tick after the start.
for _ in $(seq 50); do
  scrape "$port" >"$work/metrics.txt"
  grep -q '^ntprof_collector_agents_connected 2$' "$work/metrics.txt" &&
    grep -q '^ntprof_collector_sessions_running 1$' "$work/metrics.txt" && break
  sleep 0.2
done
grep -q '^ntprof_collector_agents_connected 2$' "$work/metrics.txt" || fail "agents_connected is not 2"
grep -q '^ntprof_collector_sessions_running 1$' "$work/metrics.txt" || fail "sessions_running is not 1"
grep -q '^ntprof_collector_records_total 200$' "$work/metrics.txt" || fail "records_total is not 200"
grep -q '^ntprof_stage_latency_seconds_bucket{.*le="+Inf"}' "$work/metrics.txt" || fail "no stage histogram"

"$promtool" check metrics <"$work/metrics.txt" >"$work/promtool.out" 2>&1
status=$?
[ "$status" = 0 ] || fail "promtool check metrics exited $status: $(cat "$work/promtool.out")"

if [ "$failures" = 0 ]; then
  echo "promtool accepts the collector's /metrics ($(grep -c '^# HELP' "$work/metrics.txt") families)"
else
  echo "--- /metrics as scraped:"; head -c 4000 "$work/metrics.txt"
fi
exit "$failures"
