#!/bin/bash
# agent_overhead.sh - what recording costs the workload: fio IOPS with ntprofd recording on both the
# host and the target (1 in N sampled, default 100) against no agent, in alternating runs, at QD1
# and QD16. Prints the ratio (target >= 0.99). Needs a running test bed (deploy/testbed/tb up).
#
#   tests/bench/agent_overhead.sh [-s N] [--runtime SECONDS] [--rounds R]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
record=$repo/deploy/testbed/record-run.sh
rate=100 runtime=15 rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    -s) rate=$2; shift ;;
    --runtime) runtime=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "agent_overhead.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
eval "$("$tb" env)"
dev=$("$tb" dev 1)
iops_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' "$1"; }

for qd in 1 16; do
  off_total=0 on_total=0
  for round in $(seq 1 "$rounds"); do
    "$tb" ssh host "fio --name=off --filename=$dev --direct=1 --ioengine=io_uring --time_based \
        --runtime=$runtime --rw=randread --bs=4k --iodepth=$qd --output-format=json" > /tmp/ntprof-off.json
    off=$(iops_of /tmp/ntprof-off.json)
    run=$("$record" "bench-qd$qd-$round" -s "$rate" --runtime "$runtime" -- --rw=randread --bs=4k --iodepth="$qd")
    on=$(iops_of "$run/fio.json")
    echo "QD$qd round $round: off $off IOPS, on $on IOPS"
    off_total=$(awk -v a="$off_total" -v b="$off" 'BEGIN{print a+b}')
    on_total=$(awk -v a="$on_total" -v b="$on" 'BEGIN{print a+b}')
  done
  awk -v on="$on_total" -v off="$off_total" -v qd="$qd" -v n="$rate" \
    'BEGIN{printf "QD%d: IOPS with agents (1 in %d) / without = %.3f\n", qd, n, on/off}'
done
