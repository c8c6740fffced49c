#!/bin/bash
# overhead_guest.sh - the guest half of agent_overhead.py, run inside a test-bed VM (copied to
# /mnt/host/bin by the benchmark). One ssh call per step keeps the driver's own cost off the runs.
#
#   overhead_guest.sh start ROLE TRANSPORT RATE [DEVICE [SALT [NTPROFD [INTERVAL]]]]
#                                                          ntprofd record, back once it records
#                                                          (DEVICE - for none; SALT default 12345;
#                                                          NTPROFD: another build's binary;
#                                                          INTERVAL: seconds, default 1 as the
#                                                          service runs)
#   overhead_guest.sh start-empty PROGRAM...               programs that do nothing at those
#                                                          points (the benchmark's floor), back
#                                                          once attached; stop and snap treat
#                                                          them as the agent
#   overhead_guest.sh stop                                 SIGINT the agent, wait for its file
#   overhead_guest.sh snap                                 one JSON line: the agent's CPU time and
#                                                          its BPF programs' runs so far
#   overhead_guest.sh cpu-log                              log busy CPU and completed reads every
#                                                          0.25 s from now on
#   overhead_guest.sh cpu-per-io                           this VM's busy CPU ns per completed read
#                                                          over the last burst of reads in that log
#                                                          (no clock shared with the other VM needed)
#   overhead_guest.sh fio DEV QD SECONDS                   fio's result, the device's block-
#                                                          layer accounting and the run's window
#                                                          on this VM's wall clock
#   overhead_guest.sh fio-ios DEV QD COUNT                 the same for a run of COUNT reads
#                                                          (a fixed amount of work, not of time)
#   overhead_guest.sh fio-window DEV QD                    fio reading until told to stop, and
#                                                          these commands on stdin, one a line:
#                                                          pause (fio stopped, nothing in flight;
#                                                          prints the reads completed so far),
#                                                          resume, stop
#   overhead_guest.sh nic-stats [NIC]                      one line: NIC's (default eth1, the
#                                                          bed's VM-to-VM link) received and sent
#                                                          packets, its interrupts, the timer's
#                                                          interrupts: how much the kernel batched
set -uo pipefail
dir=/tmp/ntprof-overhead
pidfile=$dir/ntprofd.pid
mkdir -p "$dir"

agent_pid() { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && cat "$pidfile"; }

# DEV's directory in /sys/block: with native multipath the requests (and the block layer's
# accounting) are on the path device (nvme0c0n1 for nvme0n1)
block_dir() {
  local name path
  name=$(basename "$1")
  path=$(ls -d /sys/block/"${name%n*}"c*n"${name##*n}" 2>/dev/null | head -n1)
  echo "${path:-/sys/block/$name}"
}

# Before anything of ours loads: turn on the kernel's own accounting of every BPF program (run_cnt,
# run_time_ns) and note the programs already loaded (systemd's, say), which are not ours.
note_programs_before() {
  sysctl -qw kernel.bpf_stats_enabled=1
  bpftool -j prog show | python3 -c 'import json, sys
print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))' >"$dir/not-ours"
}

# Waits until the command "${@:3}" succeeds, while the process started last (its pid in $pidfile)
# lives, at most $2 seconds; $1 names what it waits for. Its log on stderr if it exits first.
await() {
  local what=$1 seconds=$2
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" && return 0
    kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$dir/agent.log" >&2; return 1; }
    sleep 0.1
  done
  echo "no $what within $seconds s" >&2; return 1
}

case $1 in
  start-empty)
    shift
    note_programs_before
    setsid /mnt/host/bin/empty_hooks "$@" >"$dir/agent.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    await '"empty_hooks: attached"' 60 grep -q "^empty_hooks: attached" "$dir/agent.log" ;;
  start)
    role=$2 transport=$3 rate=$4 device=${5:--} salt=${6:-12345} ntprofd=${7:-/mnt/host/bin/ntprofd}
    interval=${8:-1}
    extra=""
    [ "$device" != - ] && extra="--device $device"
    note_programs_before
    rm -f "$dir/agent.ntp"
    # -q: no interval lines, as the always-on agent (ntprofd serve) prints none; the lines are an
    # interactive session's, and cost about 3,000 instructions a record more (agent_insns.py)
    setsid "$ntprofd" record -q --role "$role" --transport "$transport" -s "$rate" \
      --salt "$salt" -i "$interval" $extra -o "$dir/agent.ntp" >"$dir/agent.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    # the .ntp file gets its header once every hook is attached (-q prints no banner)
    await "$dir/agent.ntp" 120 test -s "$dir/agent.ntp" ;;
  stop)
    p=$(agent_pid) || exit 0
    kill -INT "$p"
    for _ in $(seq 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    sysctl -qw kernel.bpf_stats_enabled=0
    rm -f "$pidfile" ;;
  snap)
    agent=0 progs="[]"
    if p=$(agent_pid); then
      # the first field of schedstat is the time the thread ran, in ns: exact, where utime and
      # stime are sampled at timer ticks (an agent that wakes on the tick is charged whole ticks)
      for t in /proc/"$p"/task/*/schedstat; do
        read -r ran _ <"$t" && agent=$((agent + ran))
      done
      progs=$(bpftool -j prog show | python3 -c 'import json, sys
skip = set(open(sys.argv[1]).read().split())
print(json.dumps([p for p in json.load(sys.stdin) if str(p["id"]) not in skip]))' "$dir/not-ours")
    fi
    printf '{"agent_ns":%d,"progs":%s}\n' "$agent" "$progs" ;;
  cpu-log)
    pkill -f ntprof-overhead-cpu-log 2>/dev/null
    # the reads this VM serves: the host's NVMe path devices (their block accounting), the
    # target's null_blk drives
    stats=$(ls /sys/block/nvme*c*/stat /sys/block/nullb*/stat 2>/dev/null | tr '\n' ' ')
    [ -n "$stats" ] || stats=$(ls /sys/block/nvme*/stat | tr '\n' ' ')
    # /proc/stat's cpu line: user nice system idle iowait irq softirq steal (USER_HZ ticks)
    setsid bash -c 'exec -a ntprof-overhead-cpu-log bash -c "while :; do
        read -r _ u n s _ _ i si st _ </proc/stat; r=0
        for f in $0; do read -r x _ <\$f; r=\$((r + x)); done
        echo \$((u + n + s + i + si + st)) \$r; sleep 0.25; done" "$1"' "$stats" \
      >"$dir/cpu.log" 2>/dev/null </dev/null & ;;
  cpu-per-io)
    python3 -c '
import sys
log = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
# bursts: runs of samples whose read count rose since the one before. The last one of at least
# 20 reads is the benchmark run (a stray read or two elsewhere makes a burst of its own); from its
# first to its last sample this VM did nothing but serve it.
bursts, i = [], 1
while i < len(log):
    if log[i][1] > log[i - 1][1]:
        j = i
        while j + 1 < len(log) and log[j + 1][1] > log[j][1]:
            j += 1
        bursts.append((i, j))  # i: the first sample inside (the one before may precede the run)
        i = j + 1
    else:
        i += 1
runs = [(a, b) for a, b in bursts if log[b][1] - log[a][1] >= 20]
if not runs:
    raise SystemExit("no burst of reads in the CPU log")
start, end = runs[-1]
busy, reads = log[end][0] - log[start][0], log[end][1] - log[start][1]
print(int(busy * 1e9 / int(sys.argv[2]) / reads) if reads else 0)
' "$dir/cpu.log" "$(getconf CLK_TCK)" ;;
  fio|fio-ios)
    dev=$2 qd=$3
    if [ "$1" = fio ]; then limit=(--time_based --runtime="$4"); else limit=(--number_ios="$4"); fi
    stat=$(block_dir "$dev")/stat
    before=$(cat "$stat")
    # the run's window on this VM's wall clock: the recording dates its commands on it
    wall_start=$(date +%s%N)
    fio --name=bench --filename="$dev" --direct=1 --ioengine=io_uring "${limit[@]}" \
      --rw=randread --bs=4k --iodepth="$qd" --output-format=json \
      --output="$dir/fio.json" >/dev/null || exit 1
    wall_end=$(date +%s%N)
    after=$(cat "$stat")
    # /sys/block/DEV/stat: reads completed [0], ms spent reading [3]
    python3 -c '
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]["read"]
b, a = [list(map(int, s.split())) for s in sys.argv[2:4]]
print(json.dumps({"iops": job["iops"], "ios": job["total_ios"], "block_reads": a[0] - b[0],
                  "block_read_ms": a[3] - b[3], "wall_start_ns": int(sys.argv[4]),
                  "wall_end_ns": int(sys.argv[5])}))
' "$dir/fio.json" "$before" "$after" "$wall_start" "$wall_end" ;;
  fio-window)
    # A window inside one running fio: its start-up, and the ssh that runs it, stay outside the
    # counts. The driver holds this shell open and reads both VMs' instruction counts while fio is
    # paused. Nothing here forks once fio runs: the waits are bash builtins on a pipe that never
    # carries data, so what the pause itself costs hardly varies.
    dev=$2 qd=$3
    block=$(block_dir "$dev")
    never=$dir/never-written
    [ -p "$never" ] || mkfifo "$never"
    exec 3<>"$never"  # opened for both ends: never blocks, never has data
    pause_s() { read -r -t "$1" -u 3 _; }
    # one process (--thread: jobs are threads, not processes that leave the group) in a session of
    # its own: one signal to its process group stops and resumes all of fio
    setsid fio --name=bench --filename="$dev" --direct=1 --ioengine=io_uring --thread --time_based \
      --runtime=86400 --disk_util=0 --rw=randread --bs=4k --iodepth="$qd" \
      --output=/dev/null >/dev/null 2>&1 </dev/null &
    fio_pid=$!
    for _ in $(seq 5000); do
      read -r reads _ <"$block/stat"
      [ "$reads" -gt 0 ] 2>/dev/null && [ "$reads" != "${first:=$reads}" ] && break
      kill -0 "$fio_pid" 2>/dev/null || { echo "fio ended at start" >&2; exit 1; }
      pause_s 0.005
    done
    echo ready
    while read -r command; do
      case $command in
        pause)
          kill -STOP -- -"$fio_pid"
          # the requests fio had in flight complete; then the count is final
          while read -r r w <"$block/inflight"; [ $((r + w)) -gt 0 ]; do pause_s 0.002; done
          read -r reads _ <"$block/stat"
          echo "$reads" ;;
        resume) kill -CONT -- -"$fio_pid"; echo resumed ;;
        stop) break ;;
        *) echo "unknown command $command" ;;
      esac
    done
    kill -CONT -- -"$fio_pid" 2>/dev/null
    kill -TERM -- -"$fio_pid" 2>/dev/null
    wait "$fio_pid" 2>/dev/null
    exit 0 ;;
  nic-stats)
    # Batching follows the two VMs' relative speed under emulation: more packets and interrupts
    # per I/O, more instructions per I/O (tests/bench/batching_adjust.py fits it out)
    nic=${2:-eth1}
    stats=/sys/class/net/$nic/statistics
    [ -d "$stats" ] || { echo "overhead_guest.sh: no network interface $nic" >&2; exit 1; }
    device=$(basename "$(readlink -f "/sys/class/net/$nic/device")")  # virtio2: its vectors' names
    read -r rx <"$stats/rx_packets"
    read -r tx <"$stats/tx_packets"
    awk -v rx="$rx" -v tx="$tx" -v dev="$device-" '
      $1 == "LOC:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) timer += $i }
      index($NF, dev) == 1 { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) irqs += $i }
      END { print rx, tx, irqs + 0, timer + 0 }' /proc/interrupts
    exit 0 ;;
  *) echo "overhead_guest.sh: unknown step $1" >&2; exit 2 ;;
esac
