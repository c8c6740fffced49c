#!/bin/bash
# fault_scenarios.sh - what happens to recordings when things go wrong, in a running test bed:
#   fio killed mid-run, the NVMe controller disconnected mid-run, the agent SIGKILLed, and an agent
#   started for a role the machine does not have. Each prints "ok:"/"FAIL:" lines; exit 1 if any failed.
# Usage: fault_scenarios.sh NTPROFCTL   (the bed must be up, ntprofd in its share)
set -uo pipefail
ctl=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
eval "$("$tb" env)"
out=$NTPROF_TB_SHARE/out/faults
rm -rf "$out" && mkdir -p "$out"
dev=$("$tb" dev 1)
failures=0
check() {  # DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

start_agent() {  # ROLE NAME
  "$tb" ssh "$1" "setsid /mnt/host/bin/ntprofd record --role $1 --transport $NTPROF_TB_TRANSPORT -s 10 \
    --salt 7 -o /mnt/host/out/faults/$2.ntp >/mnt/host/out/faults/$2.log 2>&1 </dev/null &
    echo \$! > /run/ntprofd-$2.pid"
  for _ in $(seq 1 180); do grep -q recording "$out/$2.log" 2>/dev/null && return 0; sleep 1; done
  cat "$out/$2.log" >&2
  return 1
}
signal_agent() {  # ROLE NAME SIGNAL: and wait for it to end
  "$tb" ssh "$1" "p=\$(cat /run/ntprofd-$2.pid); kill -$3 \$p;
    for i in \$(seq 1 120); do kill -0 \$p 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
}
fio_bg() {  # start fio in the background on the host; its pid in /run/fio.pid
  "$tb" ssh host "setsid fio --name=f --filename=$dev --direct=1 --ioengine=io_uring --rw=randread \
    --bs=4k --iodepth=1 --time_based --runtime=60 >/dev/null 2>&1 </dev/null & echo \$! > /run/fio.pid"
}
readable() {  # FILE...: ntprofctl report exits 0 on it
  "$ctl" report "$@" > "$out/report.txt" 2>&1
}

# 1. fio killed mid-run: both files complete, joined
start_agent target fio-killed-target && start_agent host fio-killed-host || failures=$((failures + 1))
fio_bg; sleep 8
"$tb" ssh host 'kill -9 $(cat /run/fio.pid)'
sleep 2
signal_agent host fio-killed-host INT; signal_agent target fio-killed-target INT
check "fio killed: host and target files report" readable "$out/fio-killed-host.ntp" "$out/fio-killed-target.ntp"
check "fio killed: records joined" grep -q "matched (100.0 %" "$out/report.txt"

# 2. agent SIGKILLed: its file reads up to the last batch, with a note
start_agent host sigkill-host || failures=$((failures + 1))
fio_bg; sleep 8
signal_agent host sigkill-host KILL
"$tb" ssh host 'kill -9 $(cat /run/fio.pid)' || true
check "SIGKILL: the file is readable" readable "$out/sigkill-host.ntp"
check "SIGKILL: the report says it was not finalized" grep -q "not finalized" "$out/report.txt"

# 3. controller disconnected mid-recording: the agent finishes the file and says so
start_agent host disconnect-host || failures=$((failures + 1))
fio_bg; sleep 8
"$tb" ssh host "nvme disconnect -n $NTPROF_TB_NQN" >/dev/null
sleep 3
signal_agent host disconnect-host INT
check "disconnect: the file reports" readable "$out/disconnect-host.ntp"
check "disconnect: the agent exited cleanly" bash -c "! grep -qi 'abort\|segmentation' '$out/disconnect-host.log'"
"$tb" ssh host "nvme connect -t $NTPROF_TB_TRANSPORT -a 192.168.100.1 -s $NTPROF_TB_PORT -n $NTPROF_TB_NQN" >/dev/null \
  || { echo "FAIL: reconnect after the disconnect test"; failures=$((failures + 1)); }

# 4. the wrong role for the machine: a clear error naming what is missing
msg=$("$tb" ssh host "/mnt/host/bin/ntprofd record --role target --transport tcp -s 10 -d 1 -o /tmp/x.ntp" 2>&1)
rc=$?
check "wrong role: non-zero exit" [ "$rc" != 0 ]
check "wrong role: the message names nvmet" grep -qi "nvmet" <<<"$msg"

[ "$failures" = 0 ]
