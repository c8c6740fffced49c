#!/bin/bash
# run-scenarios.sh BUILD_DIR - the end-to-end tests on real NVMe/TCP traffic in the two-VM test bed,
# each checked against ground truth (tests/testbed/check_run.py). One boot of the VMs serves all
# scenarios. Prints "N passed, M failed" last.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
tb=$repo/deploy/testbed/tb
record=$repo/deploy/testbed/record-run.sh
check="$repo/tests/testbed/check_run.py $build/client/ntprofctl"
export NTPROF_BUILD_DIR=$build
runtime=${NTPROF_SCENARIO_RUNTIME:-30}
drive_delay_us=${NTPROF_SCENARIO_DRIVE_US:-5000}
link_delay_us=${NTPROF_SCENARIO_LINK_US:-5000}

passed=0
failed=0
scenario() {  # NAME COMMAND...: one scenario passes when its command exits 0
  local name=$1; shift
  echo "--- scenario: $name"
  if "$@"; then passed=$((passed + 1)); echo "--- $name: passed"; else failed=$((failed + 1)); echo "--- $name: FAILED"; fi
}

trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --transport tcp || { echo "0 passed, 1 failed"; exit 1; }
eval "$("$tb" env)"
out=$NTPROF_TB_SHARE/out

run_and_check() {  # NAME [record-run args...]
  local name=$1; shift
  "$record" "$name" --runtime "$runtime" "$@" >/dev/null && $check consistent "$out/$name"
}

# The baseline and the delay runs sample every command (-s 1): then each command carries the same
# probes, and the kernel's own block accounting is ground truth for the end-to-end latency.
scenario "baseline 4KiB randread QD1, end to end vs the block layer's accounting" bash -c "
  '$record' baseline --runtime $runtime -s 1 >/dev/null && $check consistent '$out/baseline' --latency"
scenario "drive delay ${drive_delay_us} us lands in storage" bash -c "
  '$tb' set-drive-delay $((drive_delay_us * 1000)) &&
  '$record' drive --runtime $runtime -s 1 >/dev/null &&
  '$tb' set-drive-delay 0 &&
  $check consistent '$out/drive' && $check shift '$out/baseline' '$out/drive' storage $drive_delay_us"
scenario "link delay ${link_delay_us} us lands in network" bash -c "
  '$tb' set-link-delay $link_delay_us &&
  '$record' link --runtime $runtime -s 1 >/dev/null &&
  '$tb' set-link-delay 0 &&
  $check consistent '$out/link' && $check shift '$out/baseline' '$out/link' network $link_delay_us"
scenario "4KiB randread QD8" run_and_check qd8 -s 10 -- --rw=randread --bs=4k --iodepth=8
scenario "4KiB randwrite QD1" run_and_check randwrite -s 10 -- --rw=randwrite --bs=4k --iodepth=1
scenario "faults: fio killed, agent SIGKILLed, controller disconnected, wrong role" \
  "$repo/tests/testbed/fault_scenarios.sh" "$build/client/ntprofctl"
if [ "${NTPROF_BENCH:-0}" = 1 ]; then
  echo "--- benchmark: agent overhead"
  "$repo/tests/bench/agent_overhead.sh"
fi

echo "test bed scenarios: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
