#!/bin/bash
# Real SPDK, recorded by the real agent: nvmf_tgt (NVMe/TCP on 127.0.0.1, a malloc bdev behind a
# delay bdev) driven by SPDK's perf at QD1 with sequential I/O (see below), both built with
# ntprof's patch; ntprofd records the target (--spdk-target nvmf_tgt) and the host (--spdk-host
# perf) separately, then the report of the two files is checked against ground truth, per I/O class
# (4 KiB and 128 KiB reads and writes; 128 KiB writes go through R2T, the target's in-capsule size
# being 4 KiB):
#   every command matched (after the session's edges), no stage negative, bytes = the I/O size,
#   status 0, no admin or fabrics command among the groups; and storage follows the delay bdev:
#   each class runs twice, the delay bdev at BASE_US, then at BASE_US + DELAY_US, and the storage
#   median must rise by DELAY_US (+-10 %), never lying below the delay.
# Why a rise and a prefill: storage is the delay bdev's time AND the malloc bdev's below it. The
# malloc bdev's memory is DPDK's --no-huge memory, a memfd that DPDK knows is fresh, so
# bdev_malloc_create's zeroing skips it: the first I/O to touch each 4 KiB page takes its page
# fault inside storage (measured: a 128 KiB read of untouched blocks 300-700 us, +19-36 % of a
# 2 ms delay at the median, as most early reads land on untouched blocks; 4 KiB, one page, ~1 %).
# perf writes the whole namespace once before any class runs, so every class sees populated memory;
# what is left, the copy (10 us for a 128 KiB read), is in both runs of a class and cancels.
# Why sequential: at QD1 every command has cid 0, so the join tells commands apart by (opcode,
# slba, nlb) alone, pairing the k-th of each side; the target agent records perf's first commands
# before the host agent has found perf (the session's edge), and with random I/O one of those could
# carry the slba of the host's first record and be taken for its partner (seen with 512 128 KiB
# blocks: the true partner then counted as a loss). Sequentially, an slba comes back only after
# the whole namespace (2,048 commands of 128 KiB), far longer than any edge.
# Needs root (uprobes), the SPDK tree of build_spdk.sh, and the two cores free (both poll).
#
# usage: spdk_pair_test.sh SPDK_TREE NTPROFD NTPROFCTL [OUT_DIR]
# NTPROF_SPDK_DELAY_US (2000), NTPROF_SPDK_BASE_US (500), NTPROF_SPDK_SECONDS (2, per run),
# NTPROF_SPDK_RATE (1: every command sampled)
set -euo pipefail
spdk=$1 ntprofd=$2 ntprofctl=$3
out=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/delay_target.sh"
[ "$(id -u)" = 0 ] || { echo "SKIPPED: uprobes need root"; exit 77; }
delay_us=${NTPROF_SPDK_DELAY_US:-2000} base_us=${NTPROF_SPDK_BASE_US:-500}
seconds=${NTPROF_SPDK_SECONDS:-2} rate=${NTPROF_SPDK_RATE:-1}
malloc_mb=256
nqn=nqn.2016-06.io.spdk:ntprof-test
export LD_LIBRARY_PATH=$spdk/build/lib
perf_bin=$("$here/build_spdk.sh" --perf "$spdk")  # (v23.01.1: build/examples/perf)
log() { echo "[spdk-pair +$SECONDS s] $*"; }
mkdir -p "$out"
trap stop_started_processes EXIT

rpc() { python3 "$spdk/scripts/rpc.py" -s "$out/spdk.sock" >/dev/null; }  # the calls: one a line on stdin
log "nvmf_tgt on core 0 (no hugepages), delay bdev at 0 us for the prefill"
start_local_delay_target "$spdk" "$out" "$malloc_mb" 0 "$nqn" NTPROF0001 4420
set_delay() {  # US: every read and write (average and p99) of the delay bdev, in one rpc.py
  printf 'bdev_delay_update_latency Delay0 %s %s\n' avg_read "$1" p99_read "$1" avg_write "$1" p99_write "$1" | rpc
}
perf() {  # NAME PERF-ARGS...
  local name=$1; shift
  SPDK_PERF_NO_HUGE=1 "$perf_bin" -c 0x2 -s 512 "$@" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:$nqn" >"$out/$name-perf.log" 2>&1 \
    || { echo "perf failed:"; tail -20 "$out/$name-perf.log"; exit 1; }
}
log "prefill: perf writes the whole namespace once (sequential 128 KiB, QD32), populating the malloc bdev's pages"
perf prefill -q 32 -o 131072 -w write -d $((malloc_mb * 8)) -t 60

start_agent() {  # NAME ARGS...: ntprofd record in the background; its PID in $agent
  local name=$1; shift
  "$ntprofd" record "$@" -s "$rate" --salt 77 -i 1 -o "$out/$name.ntp" >"$out/$name.log" 2>&1 &
  agent=$!
  pids+=("$agent")
}
wait_recording() {  # NAME...: until each agent says "recording"
  local name
  for name in "$@"; do
    for _ in $(seq 1 100); do grep -q "recording" "$out/$name.log" && continue 2; sleep 0.1; done
    echo "ntprofd ($name) did not start:"; cat "$out/$name.log"; return 1
  done
}
record_run() {  # NAME RW BYTES DELAY_US: both agents, perf at QD1, the joined report in NAME.json / .txt
  local name=$1 target_agent host_agent
  start_agent "$name-target" --spdk-target "$spdk/build/bin/nvmf_tgt"; target_agent=$agent
  start_agent "$name-host" --spdk-host "$perf_bin"; host_agent=$agent
  set_delay "$4"  # (while the agents start)
  wait_recording "$name-target" "$name-host"
  perf "$name" -q 1 -o "$3" -w "$2" -t "$seconds"
  sleep 1.5  # the agents' last interval
  kill -INT "$host_agent" "$target_agent"
  wait "$host_agent" "$target_agent"
  pids=("$tgt_pid")  # (ended agents' PIDs are not ours to signal any more)
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json --slowest 100000 >"$out/$name.json"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" --detail >"$out/$name.txt"
}
status=0
high_us=$((base_us + delay_us))
for class in "read 4096" "write 4096" "read 131072" "write 131072"; do
  set -- $class
  for d in "$base_us" "$high_us"; do
    log "perf $1 $2 B QD1 ${seconds} s, delay bdev $d us"
    record_run "$1-$2-$d" "$1" "$2" "$d"
  done
  python3 "$here/check_spdk_run.py" "$out/$1-$2-$high_us.json" "$2" "$high_us" \
    --rise-over "$out/$1-$2-$base_us.json" "$base_us" || status=1
done
[ $status = 0 ] && cat "$out/read-4096-$high_us.txt"
exit $status
