#!/bin/bash
# A user-space NVMe/TCP initiator (tests/userspace/nvme_tcp_initiator.py: plain sockets, written
# for this test) in the host VM against the kernel target, with a known drive delay:
#  1. host recorded through libntprof_probe.so's Python binding (`ntprofd record --spdk-host
#     LIBRARY`), target by the kernel agent; joined: every command matched, no negative stage,
#     storage = the drive delay, bytes and status as the initiator sent them;
#  2. the target agent alone profiles the same initiator (it knows nothing of the initiator).
# For 4 KiB reads, 4 KiB in-capsule writes and 128 KiB writes (R2T + H2CData).
#
# usage: userspace_initiator_scenarios.sh NTPROFCTL LIBRARY     (the bed up, ntprofd shared)
set -euo pipefail
ntprofctl=$1 library=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
eval "$("$tb" env)"
rate=2 salt=$RANDOM delay_us=10000
guest_lib=$("$tb" share "$library")
"$tb" share "$repo/probe/python/ntprof_probe.py" "$repo/tests/userspace/nvme_tcp_initiator.py" >/dev/null
out=$NTPROF_TB_SHARE/out/userspace
guest_out=/mnt/host/out/userspace
rm -rf "$out"; mkdir -p "$out"
log() { echo "[userspace] $*"; }

start_agent() {  # ROLE NAME ARGS...: ntprofd record in a VM, until "recording"
  local role=$1 name=$2; shift 2
  "$tb" ssh "$role" "setsid /mnt/host/bin/ntprofd record -s $rate --salt $salt -i 1 $* \
      -o $guest_out/$name.ntp >$guest_out/$name.log 2>&1 </dev/null & echo \$! > /run/ntprofd-$name.pid"
  for _ in $(seq 1 180); do
    grep -q "recording" "$out/$name.log" 2>/dev/null && return 0
    sleep 1
  done
  echo "ntprofd ($name) did not start:"; cat "$out/$name.log"; return 1
}
stop_agent() {  # ROLE NAME
  "$tb" ssh "$1" "p=\$(cat /run/ntprofd-$2.pid); kill -INT \$p; for i in \$(seq 1 120); do
      kill -0 \$p 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
}

"$tb" set-drive-delay $((delay_us * 1000)) >/dev/null
trap '"$tb" set-drive-delay 0 >/dev/null 2>&1 || true' EXIT
status=0
for class in "read 4096" "write 4096" "write 131072"; do
  set -- $class
  rw=$1 bs=$2 name=$1-$2
  start_agent target "$name-target" --role target --transport tcp
  # the library is known before the initiator loads it: the agent attaches when python maps it
  start_agent host "$name-host" --spdk-host "$guest_lib"
  "$tb" ssh host "cd /mnt/host/bin && PYTHONPATH=/mnt/host/bin NTPROF_PROBE_LIB=$guest_lib \
      python3 nvme_tcp_initiator.py --addr $NTPROF_TB_TARGET_IP --port $NTPROF_TB_PORT_TCP \
      --nqn $NTPROF_TB_NQN_TCP --rw $rw --bs $bs --count 300 --probe --wait-for-agent 60" >"$out/$name.json"
  sleep 1.5  # the agents' last interval
  stop_agent host "$name-host"; stop_agent target "$name-target"
  log "$name: $(cat "$out/$name.json")"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json --slowest 100000 \
    >"$out/$name-joined.json"
  "$ntprofctl" report "$out/$name-target.ntp" -o json --slowest 100000 >"$out/$name-alone.json"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" >"$out/$name-joined.txt"
  python3 "$repo/tests/testbed/check_userspace_run.py" "$out/$name.json" "$out/$name-joined.json" \
    "$out/$name-alone.json" "$delay_us" || status=1
done
[ $status = 0 ] && cat "$out/read-4096-joined.txt"
exit $status
