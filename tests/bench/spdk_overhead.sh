#!/bin/bash
# spdk_overhead.sh - what recording real SPDK costs its IOPS: a benchmark (it prints, it never
# asserts). The patched nvmf_tgt (NVMe/TCP on 127.0.0.1, a malloc bdev behind a delay bdev of
# DELAY_US, 0 by default: as fast as the target goes) and SPDK's perf, 4 KiB random reads, run
# round after round without agents and with both agents (ntprofd record --spdk-target nvmf_tgt and
# ntprofd record --spdk-host perf, 1 in RATE sampled), the two modes alternating in order (off/on,
# then on/off, ...) at each queue depth. Prints per QD the median IOPS of each mode, the median of
# each round's paired ratio (with agents / without) and its bootstrap 95 % confidence interval
# (median_ci of tests/bench/agent_overhead.py), the commands the agents recorded (matched) and the
# agents' CPU time over perf's run (both processes, % of one core).
#
# On 2 cores, both SPDK processes busy-poll one core each (nvmf_tgt on core 0, perf on core 1):
# the agents have no core of their own and take their time (ring-buffer draining, the 0.25 s /proc
# rescans, the interval reports) from the pollers, so the ratio here includes that competition,
# which a machine with a spare core for the agent would not show. The sampled commands' own cost
# (stamps and the USDT probe's uprobe trap) is in it either way.
#
# usage: spdk_overhead.sh SPDK_TREE NTPROFD NTPROFCTL [--rounds 8] [--seconds 3] [--qd 1,32]
#                         [--rate 100] [--bs 4096] [--delay-us 0] [--out DIR]
# Needs root (uprobes) and the SPDK tree of tests/spdk/real/build_spdk.sh.
set -euo pipefail
spdk=$1 ntprofd=$2 ntprofctl=$3
shift 3
rounds=8 seconds=3 qds=1,32 rate=100 bs=4096 delay_us=0 out=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2 ;; --seconds) seconds=$2 ;; --qd) qds=$2 ;; --rate) rate=$2 ;;
    --bs) bs=$2 ;; --delay-us) delay_us=$2 ;; --out) out=$2 ;;
    *) echo "spdk_overhead.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/tests/spdk/real/delay_target.sh"
[ "$(id -u)" = 0 ] || { echo "spdk_overhead.sh: uprobes need root" >&2; exit 1; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"
nqn=nqn.2016-06.io.spdk:ntprof-bench
export LD_LIBRARY_PATH=$spdk/build/lib
perf_bin=$("$repo/tests/spdk/real/build_spdk.sh" --perf "$spdk")  # (v23.01.1: build/examples/perf)
log() { echo "[spdk-overhead +$SECONDS s] $*" >&2; }
trap stop_started_processes EXIT

log "nvmf_tgt on core 0, delay bdev ${delay_us} us; results in $out"
start_local_delay_target "$spdk" "$out" 256 "$delay_us" "$nqn" NTPROFBENCH1 4421
perf() {  # NAME PERF-ARGS...
  local name=$1; shift
  SPDK_PERF_NO_HUGE=1 "$perf_bin" -c 0x2 -s 512 "$@" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4421 subnqn:$nqn" >"$out/$name-perf.log" 2>&1 \
    || { echo "perf failed:" >&2; tail -20 "$out/$name-perf.log" >&2; exit 1; }
}
# the malloc bdev's pages are populated on first touch (tests/spdk/real/spdk_pair_test.sh): all of
# them now, so that no run pays page faults the runs before it did not
log "prefill: perf writes the whole namespace once"
perf prefill -q 32 -o 131072 -w write -d $((256 * 8)) -t 60
cpu_s() {  # PID...: their user + system CPU seconds
  local p t=0
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "$t $(getconf CLK_TCK)" | awk '{print $1 / $2}'
}

start_agent() {  # NAME ARGS...: ntprofd record until it says "recording"; its PID in $agent
  local name=$1; shift
  "$ntprofd" record "$@" -s "$rate" --salt 91 -i 1 -o "$out/$name.ntp" >"$out/$name.log" 2>&1 &
  agent=$!
  pids+=("$agent")
  for _ in $(seq 1 100); do grep -q "recording" "$out/$name.log" && return 0; sleep 0.1; done
  echo "ntprofd ($name) did not start:" >&2; cat "$out/$name.log" >&2; return 1
}
run() {  # ROUND QD MODE: one perf run (1 s warm-up, not counted) to runs.txt:
  #        "qd mode round iops recorded agents-cpu-%" (the agents' CPU over perf's wall time)
  local round=$1 qd=$2 mode=$3 name=r$1-qd$2-$3 recorded=- cpu=- target_agent host_agent t0 c0
  if [ "$mode" = on ]; then
    start_agent "$name-target" --spdk-target "$spdk/build/bin/nvmf_tgt"; target_agent=$agent
    start_agent "$name-host" --spdk-host "$perf_bin"; host_agent=$agent
    t0=$(date +%s.%N) c0=$(cpu_s "$host_agent" "$target_agent")
  fi
  perf "$name" -q "$qd" -o "$bs" -w randread -a 1 -t "$seconds"
  if [ "$mode" = on ]; then
    cpu=$(echo "$(cpu_s "$host_agent" "$target_agent") $c0 $(date +%s.%N) $t0" |
      awk '{printf "%.1f", 100 * ($1 - $2) / ($3 - $4)}')
    kill -INT "$host_agent" "$target_agent"
    wait "$host_agent" "$target_agent" || true
    pids=("$tgt_pid")  # (ended agents' PIDs are not ours to signal any more)
    recorded=$("$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["records"]["matched"])')
    rm -f "$out/$name-host.ntp" "$out/$name-target.ntp"
  fi
  echo "$qd $mode $round $(awk '$1 == "Total" {print $3}' "$out/$name-perf.log") $recorded $cpu" >>"$out/runs.txt"
}

IFS=, read -ra qd_list <<<"$qds"
: >"$out/runs.txt"
for round in $(seq 1 "$rounds"); do
  for qd in "${qd_list[@]}"; do
    if [ $((round % 2)) = 1 ]; then modes="off on"; else modes="on off"; fi
    for mode in $modes; do
      run "$round" "$qd" "$mode"
      log "round $round QD$qd $mode: $(tail -1 "$out/runs.txt" |
        awk '{print $4 " IOPS, recorded " $5 ", agents CPU " $6 " %"}')"
    done
  done
done

python3 - "$out/runs.txt" "$repo/tests/bench" "$rounds" "$seconds" "$rate" "$bs" "$delay_us" <<'EOF'
import statistics, sys
runs_file, bench, rounds, seconds, rate, bs, delay_us = sys.argv[1:]
sys.path.insert(0, bench)
from agent_overhead import median_ci  # the project's one bootstrap

runs = {}
for line in open(runs_file):
    qd, mode, rnd, iops, recorded, cpu = line.split()
    runs.setdefault(int(qd), {}).setdefault(int(rnd), {})[mode] = (float(iops), recorded, cpu)
print(f"SPDK nvmf_tgt + perf, NVMe/TCP on 127.0.0.1, {bs} B random reads, delay bdev {delay_us} us; "
      f"{rounds} rounds of {seconds} s per mode, alternating; agents: ntprofd record "
      f"--spdk-target and --spdk-host, 1 in {rate}")
print(f"{'QD':>4} {'IOPS off':>10} {'IOPS on':>10} {'ratio on/off [95% CI]':>28} {'recorded/run':>13} "
      f"{'agents CPU':>11}")
for qd, by_round in sorted(runs.items()):
    pairs = [r for r in by_round.values() if "on" in r and "off" in r]
    off = statistics.median(r["off"][0] for r in pairs)
    on = statistics.median(r["on"][0] for r in pairs)
    med, lo, hi = median_ci([r["on"][0] / r["off"][0] for r in pairs])
    rec = statistics.median(int(r["on"][1]) for r in pairs)
    cpu = statistics.median(float(r["on"][2]) for r in pairs)
    print(f"{qd:>4} {off:>10.0f} {on:>10.0f} {med:>10.3f} [{lo:.3f}, {hi:.3f}]{'':>4} {rec:>13.0f} "
          f"{cpu:>9.1f} %")
EOF
