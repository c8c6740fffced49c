#!/bin/bash
# `ntprofctl watch SESSION` across a collector killed -9 and restarted on the same data directory:
# the watch says the collector went away, reconnects, says it is back and keeps printing intervals
# of the same session (it ends only at Ctrl-C, --count or the end of the session).
#   ntprofctl_watch_restart_test.sh NTPROFCTL NTPROF_COLLECTOR REPLAY_AGENT MAKE_TEST_RECORDINGS
set -uo pipefail
ctl=$1 collector=$2 replay=$3 make_recordings=$4
# shellcheck source=harness.sh
source "$(dirname "$0")/harness.sh"

"$make_recordings" "$work/rec" || exit 1
sock="unix:$work/collector.sock"
export NTPROF_COLLECTOR=$sock
collector_pid=""
start_collector() {
  "$collector" --listen "$sock" --data-dir "$work/data" --metrics-listen "" --log-level warn &
  collector_pid=$!
  pids+=("$collector_pid")
  for _ in $(seq 50); do "$ctl" status >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "the collector did not come up"
  return 1
}
wait_for() {  # seconds, description, command...
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 5))); do "$@" && return 0; sleep 0.2; done
  fail "timed out waiting for $what: $(tail -5 "$work/watch.log")"
  return 1
}
intervals_since() {  # intervals printed from the first line matching $1 on
  sed -n "/$1/,\$p" "$work/watch.log" | grep -c '^-- '
}
at_least() { [ "$(intervals_since "$2")" -ge "$1" ]; }  # N, pattern

start_collector || exit 1
replay_both_halves "$replay" "$sock"
# The replayed recordings are of session test.
"$ctl" start test -s 10 >/dev/null || fail "start test"

# stdout and stderr in one file: the order of intervals and messages is kept.
"$ctl" watch test >"$work/watch.log" 2>&1 &
watch_pid=$!
pids+=("$watch_pid")
wait_for 10 "the first intervals" at_least 2 "^-- " || exit 1

kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
wait_for 10 "the watch to notice" grep -q "ntprofctl watch: collector at $sock went away.*; reconnecting" \
  "$work/watch.log"
sleep 1  # a few reconnect attempts fail meanwhile
kill -0 "$watch_pid" 2>/dev/null || fail "watch exited while the collector was down: $(tail -3 "$work/watch.log")"

start_collector || exit 1
wait_for 20 "the watch to reconnect" grep -q "ntprofctl watch: collector at $sock is back; watching again" \
  "$work/watch.log"
wait_for 10 "intervals after the restart" at_least 2 "is back; watching again"
kill -0 "$watch_pid" 2>/dev/null || fail "watch is not running after the restart"
# TERM: a background job of a non-interactive shell ignores SIGINT.
kill "$watch_pid"; wait "$watch_pid" 2>/dev/null

[ "$failures" = 0 ] && echo "all ntprofctl watch restart checks passed"
exit "$failures"
