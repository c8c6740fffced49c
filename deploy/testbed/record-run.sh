#!/bin/bash
# record-run.sh - one recorded run in the test bed: ntprofd records the target and the host while
# fio runs on the host's NVMe-oF namespace. Needs a running bed (`tb up`) with ntprofd in the share.
#
#   record-run.sh NAME [-s N] [--salt S] [--nsid N] [--transport tcp|rdma] [--runtime SECONDS]
#                      [--host-only] [-- FIO ARGS...]   (default: --rw=randread --bs=4k --iodepth=1;
#                      FIO ARGS with --name=JOB options run several jobs at once, one per --name)
# --transport: which of the bed's transports (default: the first of `tb up --transport`).
#
# Leaves in <share>/out/NAME/ (= /mnt/host/out/NAME in the VMs): host.ntp, target.ntp, fio.json,
# host.log, target.log, diskstat.before/after (the namespace's /sys/block/DEV/stat around fio). Prints that directory on stdout. Exit status non-zero with the agent's log
# on stderr when an agent fails to start or to finish its file.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB=$HERE/tb
name=${1:?usage: record-run.sh NAME [-s N] [--salt S] [--nsid N] [--transport T] [--runtime S] [--host-only] [-- FIO ARGS]}
shift
rate=10 salt=$RANDOM$RANDOM nsid=1 runtime=30 host_only=0 transport=
while [ $# -gt 0 ]; do
  case $1 in
    -s) rate=$2; shift ;;
    --salt) salt=$2; shift ;;
    --nsid) nsid=$2; shift ;;
    --transport) transport=$2; shift ;;
    --runtime) runtime=$2; shift ;;
    --host-only) host_only=1 ;;
    --) shift; break ;;
    *) echo "record-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
fio_args=("$@")
[ ${#fio_args[@]} -gt 0 ] || fio_args=(--rw=randread --bs=4k --iodepth=1)

eval "$("$TB" env)"   # NTPROF_TB_SHARE, transport, ...
transport=${transport:-$NTPROF_TB_TRANSPORT}
out=$NTPROF_TB_SHARE/out/$name
guest_out=/mnt/host/out/$name
rm -rf "$out" && mkdir -p "$out"
dev=$("$TB" dev --transport "$transport" "$nsid")
log() { echo "[record-run $name] $*" >&2; }

start_agent() {  # ROLE
  local role=$1 extra=""
  [ "$role" = host ] && extra="--device $(basename "$dev")"
  "$TB" ssh "$role" "setsid /mnt/host/bin/ntprofd record --role $role --transport $transport \
      -s $rate --salt $salt -i 10 $extra -o $guest_out/$role.ntp \
      >$guest_out/$role.log 2>&1 </dev/null & echo \$! > /run/ntprofd-record.pid"
}

wait_ready() {  # ROLE: the agent says it is recording once every hook is attached
  local role=$1 deadline=$(( $(date +%s) + 180 ))
  until grep -q "recording" "$out/$role.log" 2>/dev/null; do
    if ! "$TB" ssh "$role" 'kill -0 $(cat /run/ntprofd-record.pid) 2>/dev/null'; then
      log "ntprofd on the $role exited before recording:"; cat "$out/$role.log" >&2; return 1
    fi
    [ "$(date +%s)" -lt "$deadline" ] || { log "ntprofd on the $role not ready after 180 s"; cat "$out/$role.log" >&2; return 1; }
    sleep 0.5
  done
}

stop_agent() {  # ROLE: SIGINT finalizes the file
  local role=$1
  "$TB" ssh "$role" 'p=$(cat /run/ntprofd-record.pid); kill -INT $p 2>/dev/null;
    for i in $(seq 1 120); do kill -0 $p 2>/dev/null || exit 0; sleep 0.5; done; exit 1' \
    || { log "ntprofd on the $role did not finish within 60 s"; cat "$out/$role.log" >&2; return 1; }
}

# Both agents load and attach at once (each VM has its own vCPU): about 8 s each under TCG, which
# one after the other added to every recording.
[ "$host_only" = 1 ] || start_agent target
start_agent host
# an agent that failed leaves none behind recording into the next run
[ "$host_only" = 1 ] || wait_ready target || { stop_agent host || true; exit 1; }
wait_ready host || { [ "$host_only" = 1 ] || stop_agent target || true; exit 1; }
log "fio ${fio_args[*]} on $dev over $transport for ${runtime}s (sampling 1 in $rate, salt $salt)"
# options before the first --name are global (fio's rule): several --name=JOB in FIO ARGS share them
job_name=--name=ntprof
[[ " ${fio_args[*]}" == *" --name="* ]] && job_name=""
# The kernel's own block accounting (/sys/block/DEV/stat) around the run: an independent
# measure of the block layer's mean latency for the checks. With native multipath the requests
# (and their accounting) live on the path device nvmeXcYnZ under the head nvmeXnZ.
name=$(basename "$dev")
path_dev=$("$TB" ssh host "ls -d /sys/block/${name%n*}c*n${name##*n} 2>/dev/null | head -n1")
stat=${path_dev:-/sys/block/$name}/stat
"$TB" ssh host "cat $stat > $guest_out/diskstat.before;
    fio --filename=$dev --direct=1 --ioengine=io_uring --time_based \
    --runtime=$runtime --output-format=json --output=$guest_out/fio.json $job_name ${fio_args[*]};
    cat $stat > $guest_out/diskstat.after" >/dev/null
# The host first: the target keeps recording until the host samples nothing more, so every host
# command has its target half (udev's reads after fio closes the device come just at this time).
stopped=0
stop_agent host || stopped=$?
[ "$host_only" = 1 ] || stop_agent target || stopped=$?
[ $stopped = 0 ]
echo "$out"
