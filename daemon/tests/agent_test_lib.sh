# agent_test_lib.sh - what the agent's shell tests (ntprofd_*_test.sh) share, sourced once they
# made their work folder $work: failure counting, waiting for a condition, and an EXIT trap that
# stops what the test started ($agent_pid, $collector_pid, every pid in pids), detaches its loop
# device ($loop), shows the logs when something failed and removes $work (NTPROF_TEST_KEEP=1
# keeps it).
failures=0
agent_pid="" collector_pid="" loop=""
pids=()

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

wait_for() {  # seconds, description, command...
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "timed out waiting for $what"
  return 1
}

cleanup() {
  local p
  for p in "$agent_pid" "$collector_pid" "${pids[@]}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null
  done
  wait 2>/dev/null
  [ -n "$loop" ] && losetup -d "$loop"
  if [ "$failures" != 0 ]; then
    echo "--- agent log"; tail -n 30 "$work"/agent*.log
    echo "--- collector log"; tail -n 20 "$work"/collector*.log
  fi
  if [ -n "${NTPROF_TEST_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# A 64 MiB loop device for the agent to record: sets $loop (/dev/loopN) and $dev (loopN), with the
# block layer's I/O statistics on (it stamps requests only then). Exits 77 (skipped) when losetup
# cannot make one.
make_loop_device() {
  truncate -s 64M "$work/disk.img"
  loop=$(losetup --find --show "$work/disk.img" 2>/dev/null) || { echo "SKIPPED: losetup failed"; loop=""; exit 77; }
  dev=${loop#/dev/}
  echo 1 >"/sys/block/$dev/queue/iostats"
}
