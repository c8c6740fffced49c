# Sourced by the collector's shell tests: a scratch directory and the background processes the
# test starts, both cleaned up on exit, and a failure counter.
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# replay_both_halves REPLAY_AGENT SOCKET: agents host1 and target1 replay the two halves of the test
# recordings in $work/rec/base (make_test_recordings, session "test"); returns once both are
# connected. Their logs: $work/host.log, $work/target.log.
replay_both_halves() {
  "$1" "$2" host1 host "$work/rec/base/host.ntp" >"$work/host.log" &
  pids+=($!)
  "$1" "$2" target1 target "$work/rec/base/target.ntp" >"$work/target.log" &
  pids+=($!)
  for _ in $(seq 50); do
    grep -q connected "$work/host.log" && grep -q connected "$work/target.log" && return 0
    sleep 0.2
  done
}
