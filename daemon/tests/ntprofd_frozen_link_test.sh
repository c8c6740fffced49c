#!/bin/bash
# A half-open collector link: the network path between agent and collector freezes mid-session
# (bytes stop moving both ways, no FIN or RST: a vanished switch or machine). The agent's pings go
# unanswered, it drops the link within --collector-keepalive x 2 seconds, dials again, replays what
# the collector had not acked, and the session's report counts every I/O of the loop device exactly
# once (records + counted losses = the block layer's completed I/Os).
# Needs root, BPF with BTF, losetup and python3: exits 77 (skipped) otherwise.
#   ntprofd_frozen_link_test.sh NTPROFD NTPROF_COLLECTOR NTPROFCTL
set -uo pipefail
ntprofd=$1 collector=$2 ctl=$3
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (BPF programs, loop devices)"; exit 77; }
[ -e /sys/kernel/btf/vmlinux ] || { echo "SKIPPED: kernel has no BTF"; exit 77; }
command -v losetup >/dev/null && command -v python3 >/dev/null ||
  { echo "SKIPPED: needs losetup and python3"; exit 77; }

work=$(mktemp -d /tmp/ntprofd-frozen.XXXXXX)
. "$(dirname "$0")/agent_test_lib.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

truncate -s 64M "$work/disk.img"
loop=$(losetup --find --show "$work/disk.img" 2>/dev/null) || { echo "SKIPPED: losetup failed"; loop=""; exit 77; }
dev=${loop#/dev/}
echo 1 >"/sys/block/$dev/queue/iostats"
ios() { awk '{print $1 + $5}' "/sys/block/$dev/stat"; }
reads() { dd if="$loop" of=/dev/null bs=4k count="$1" skip="$2" iflag=direct status=none; }

collector_port=$(free_port) proxy_port=$(free_port)
export NTPROF_COLLECTOR=127.0.0.1:$collector_port  # ntprofctl talks to the collector directly
"$collector" --listen "127.0.0.1:$collector_port" --data-dir "$work/data" --metrics-listen "" \
    >"$work/collector.log" 2>&1 &
pids+=($!)
python3 "$here/freeze_proxy.py" "$proxy_port" "$collector_port" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
pids+=("$proxy_pid")
wait_for 10 "the collector" "$ctl" status || exit 1
wait_for 10 "the proxy" grep -q ready "$work/proxy.log" || exit 1

keepalive=5
"$ntprofd" serve --role host --transport local --device "$dev" --agent-name frozen1 \
    --collector "127.0.0.1:$proxy_port" --collector-keepalive "$keepalive" \
    --socket "$work/run/ntprofd.sock" --spool-dir "$work/spool" >"$work/agent.log" 2>&1 &
pids+=($!)
connections() { grep -c "connected to the collector" "$work/agent.log"; }
wait_for 20 "the agent to connect" bash -c "[ \$(grep -c 'connected to the collector' '$work/agent.log') -ge 1 ]" || exit 1

"$ctl" start frozen -s 1 >/dev/null || fail "start"
wait_for 20 "the session to record" grep -q "session frozen: recording" "$work/agent.log" || exit 1
before=$(ios)
reads 400 0
sleep 1.5  # batched and acked before the path freezes
kill -USR1 "$proxy_pid"
frozen_at=$(date +%s.%N)
reads 600 1000  # recorded while nothing reaches the collector
wait_for $((keepalive * 4)) "the agent to drop the frozen link and dial again" \
    bash -c "[ \$(grep -c 'connected to the collector' '$work/agent.log') -ge 2 ]" || exit 1
redialled=$(python3 -c "import time; print(f'{time.time() - $frozen_at:.1f}')")
reads 300 2000
sleep 0.3
done_ios=$(( $(ios) - before ))
"$ctl" stop frozen >/dev/null || fail "stop"
wait_for 10 "the session to settle" bash -c "! ls '$work'/spool/*.recording >/dev/null 2>&1 && '$ctl' status | grep -q 'frozen1 .*acked seq'"
sleep 1
got=$("$ctl" report frozen | sed -n 's/^records: \([0-9]*\) host.*/\1/p')
lost=$("$ctl" report frozen -o json |
  python3 -c 'import json,sys; l=json.load(sys.stdin)["losses"]; print(sum(v for k, v in l.items() if k in ("completion_missed", "unfinished_at_stop")))')
echo "frozen link: dropped and dialled again ${redialled} s after the freeze (keepalive ${keepalive} s);" \
     "$done_ios I/Os done, $got records reported, $lost counted lost"
[ $((got + lost)) = "$done_ios" ] || fail "$got records + $lost counted lost, $done_ios I/Os done"
[ "$failures" = 0 ] && echo "frozen link checks passed"
exit "$failures"
