#!/bin/bash
# insn_overhead_check.sh BUILD_DIR - the overhead regression check: boots the test bed with
# instruction counting (NVMe/TCP), runs the short form of insn_overhead.py (QD1, 1 in 100, one
# round) and fails when the agents add more guest instructions per I/O to the host or the target
# than the bounds below. Instructions are a deterministic figure (docs/overhead.md), so a bound a
# little above today's figure catches a change that adds work to the per-I/O path.
# Takes the bed down again; leaves no bed running.
#
# NTPROF_INSN_BOUND_HOST, NTPROF_INSN_BOUND_TARGET: the bounds (added instructions per I/O).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
tb=$repo/deploy/testbed/tb
# measured (docs/overhead.md, NVMe/TCP QD1, 1 in 100) plus a margin of about 10 %
bound_host=${NTPROF_INSN_BOUND_HOST:-1900}
bound_target=${NTPROF_INSN_BOUND_TARGET:-1800}
export NTPROF_BUILD_DIR=$build

if [ ! -f "$build/tests/bench/icount/libntprof_insn_count.so" ]; then
  echo "insn_overhead_check: build the plugin first: cmake --build $build --target ntprof_insn_count" >&2
  exit 1
fi
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" down >/dev/null 2>&1
"$tb" up --insn-count --transport tcp >/dev/null || { echo "insn_overhead_check: tb up --insn-count failed" >&2; exit 1; }
python3 "$repo/tests/bench/insn_overhead.py" --transports tcp --qd 1 --rates 100 --rounds 1 \
  --ios 1000 --warmup-ios 200 --max-added host="$bound_host" target="$bound_target"
