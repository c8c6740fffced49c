#!/bin/bash
# Real SPDK, recorded by the real agent: nvmf_tgt (NVMe/TCP on 127.0.0.1, a malloc bdev behind a
# delay bdev of DELAY_US) driven by SPDK's perf at QD1, both built with ntprof's patch; ntprofd
# records the target (--spdk-target nvmf_tgt) and the host (--spdk-host perf) separately, then the
# report of the two files is checked against ground truth, per I/O class (4 KiB and 128 KiB reads
# and writes; 128 KiB writes go through R2T, the target's in-capsule size being 4 KiB):
#   every command matched (after the session's edges), no stage negative, storage = the delay bdev
#   (+-10 %), bytes = the I/O size, status 0, and no admin or fabrics command among the groups.
# Needs root (uprobes), the SPDK tree of build_spdk.sh, and the two cores free (both poll).
#
# usage: spdk_pair_test.sh SPDK_TREE NTPROFD NTPROFCTL [OUT_DIR]
set -euo pipefail
spdk=$1 ntprofd=$2 ntprofctl=$3
out=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/delay_target.sh"
[ "$(id -u)" = 0 ] || { echo "SKIPPED: uprobes need root"; exit 77; }
delay_us=${NTPROF_SPDK_DELAY_US:-2000} seconds=${NTPROF_SPDK_SECONDS:-8} rate=${NTPROF_SPDK_RATE:-1}
nqn=nqn.2016-06.io.spdk:ntprof-test
export LD_LIBRARY_PATH=$spdk/build/lib
log() { echo "[spdk-pair +$SECONDS s] $*"; }
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

rpc() { python3 "$spdk/scripts/rpc.py" -s "$out/spdk.sock" "$@" >/dev/null; }
log "nvmf_tgt on core 0 (no hugepages), delay bdev ${delay_us} us"
"$spdk/build/bin/nvmf_tgt" -m 0x1 -s 1024 --no-pci --iova-mode va -r "$out/spdk.sock" \
  --env-context="--no-huge --legacy-mem" >"$out/nvmf_tgt.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do [ -S "$out/spdk.sock" ] && break; sleep 0.1; done
configure_delay_target rpc 256 "$delay_us" "$nqn" NTPROF0001 127.0.0.1 4420

start_agent() {  # NAME ARGS...: ntprofd record until it says "recording"; its PID in $agent
  local name=$1; shift
  "$ntprofd" record "$@" -s "$rate" --salt 77 -i 1 -o "$out/$name.ntp" >"$out/$name.log" 2>&1 &
  agent=$!
  pids+=($agent)
  for _ in $(seq 1 100); do grep -q "recording" "$out/$name.log" && return 0; sleep 0.1; done
  echo "ntprofd ($name) did not start:"; cat "$out/$name.log"; return 1
}
status=0
for class in "randread 4096" "randwrite 4096" "randread 131072" "randwrite 131072"; do
  set -- $class
  name=$1-$2
  start_agent "$name-target" --spdk-target "$spdk/build/bin/nvmf_tgt"; target_agent=$agent
  start_agent "$name-host" --spdk-host "$spdk/build/examples/perf"; host_agent=$agent
  log "perf $name QD1 ${seconds} s"
  SPDK_PERF_NO_HUGE=1 "$spdk/build/examples/perf" -c 0x2 -s 512 -q 1 -o "$2" -w "$1" -t "$seconds" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:$nqn" >"$out/$name-perf.log" 2>&1 \
    || { echo "perf failed:"; tail -20 "$out/$name-perf.log"; exit 1; }
  sleep 1.5  # the agents' last interval
  kill -INT "$host_agent" "$target_agent"
  wait "$host_agent" "$target_agent"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json --slowest 100000 >"$out/$name.json"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" --detail >"$out/$name.txt"
  python3 "$here/check_spdk_run.py" "$out/$name.json" "$2" "$delay_us" || status=1
done
[ $status = 0 ] && cat "$out/randread-4096.txt"
exit $status
