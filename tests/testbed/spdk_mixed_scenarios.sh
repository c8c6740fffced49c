#!/bin/bash
# A mixed pair in the test bed: real SPDK nvmf_tgt (built with ntprof's patch) in the target VM,
# the Linux kernel NVMe/TCP host in the host VM. ntprofd records the SPDK target through its USDT
# probes (--spdk-target) and the kernel host through its BPF programs; the two files join per
# command on (NQN, cntlid, qid, cid) with nothing shared but the sampling salt. Checked per class
# (4 KiB and 128 KiB reads and writes; the 128 KiB writes through R2T): every host command matched,
# no negative stage, storage at least SPDK's delay bdev (see below), bytes = the I/O size.
#
# usage: spdk_mixed_scenarios.sh SPDK_TREE NTPROFCTL     (the bed up with NVMe/TCP, ntprofd shared)
set -euo pipefail
spdk=$1 ntprofctl=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
source "$repo/tests/spdk/real/delay_target.sh"
eval "$("$tb" env)"
rate=2 salt=$RANDOM delay_us=${NTPROF_SPDK_DELAY_US:-10000} port=4430
nqn=nqn.2016-06.io.spdk:ntprof-mixed
run=spdk-mixed-$(date +%s)   # a fresh folder each run: the VMs' 9p view of a recreated one can be stale
out=$NTPROF_TB_SHARE/out/$run guest_out=/mnt/host/out/$run
log() { echo "[spdk-mixed] $*"; }
mkdir -p "$out"

# SPDK's libraries, nvmf_tgt and rpc.py, copied into the target VM's own disk (not run from 9p)
stage=$NTPROF_TB_SHARE/spdk
rm -rf "$stage"; mkdir -p "$stage"
tar -C "$spdk" -czf "$stage/spdk.tgz" build/lib build/bin/nvmf_tgt scripts/rpc.py python/spdk
sum=$(sha256sum <"$spdk/build/bin/nvmf_tgt" | cut -c1-16)-$(cat "$spdk"/build/lib/*.so | sha256sum | cut -c1-16)
"$tb" ssh target "[ \"\$(cat /opt/spdk/.sum 2>/dev/null)\" = $sum ] || { rm -rf /opt/spdk && mkdir -p /opt/spdk &&
    tar -xzf /mnt/host/spdk/spdk.tgz -C /opt/spdk && echo $sum >/opt/spdk/.sum; }"
rpc() {  # an RPC that fails prints SPDK's answer and ends the scenario
  "$tb" ssh target "python3 /opt/spdk/scripts/rpc.py -s /run/spdk.sock $*" >"$out/rpc.out" 2>&1 \
    || { echo "rpc.py $* failed:"; cat "$out/rpc.out"; tail -5 "$out/nvmf_tgt.log"; exit 1; }
}

cleanup() {
  "$tb" ssh host "nvme disconnect -n $nqn" >/dev/null 2>&1 || true
  "$tb" ssh target 'kill $(cat /run/nvmf_tgt.pid) 2>/dev/null' >/dev/null 2>&1 || true
}
trap cleanup EXIT

log "nvmf_tgt in the target VM, delay bdev ${delay_us} us, listening on $NTPROF_TB_TARGET_IP:$port"
# a target left over from a run that was killed holds SPDK's core lock
"$tb" ssh target "pkill -9 -x nvmf_tgt; sleep 0.5; rm -f /var/tmp/spdk_cpu_lock_*" || true
# -s 512: SPDK's buffer pools (8 KiB and 132 KiB iobufs) do not fit in 256 MiB
"$tb" ssh target "LD_LIBRARY_PATH=/opt/spdk/build/lib setsid /opt/spdk/build/bin/nvmf_tgt -m 0x1 -s 512 \
    --no-pci --iova-mode va --env-context='--no-huge --legacy-mem' -r /run/spdk.sock \
    >$guest_out/nvmf_tgt.log 2>&1 </dev/null & echo \$! >/run/nvmf_tgt.pid"
for _ in $(seq 1 120); do "$tb" ssh target "test -S /run/spdk.sock" && break; sleep 1; done
"$tb" ssh target "test -S /run/spdk.sock" || { echo "nvmf_tgt did not start:"; tail -20 "$out/nvmf_tgt.log"; exit 1; }
configure_delay_target rpc 64 "$delay_us" "$nqn" NTPROFMIXED1 "$NTPROF_TB_TARGET_IP" "$port"
"$tb" ssh host "nvme connect -t tcp -a $NTPROF_TB_TARGET_IP -s $port -n $nqn" >/dev/null
dev=
for _ in $(seq 1 30); do
  # the namespace's block device (the multipath head nvmeXnY, not a path nvmeXcYnZ)
  dev=$("$tb" ssh host "for b in /sys/block/nvme*n*; do case \${b##*/} in *c*) continue;; esac;
      [ \"\$(cat \$b/device/subsysnqn 2>/dev/null)\" = $nqn ] && echo \${b##*/}; done; true" | head -1) || true
  [ -n "$dev" ] && break; sleep 1
done
[ -n "$dev" ] || { echo "the kernel host did not get a namespace of $nqn"; exit 1; }
log "kernel host connected: /dev/$dev"

start_agent() {  # VM NAME ARGS...: launched; wait_ready says when it records
  local vm=$1 name=$2; shift 2
  "$tb" ssh "$vm" "setsid /mnt/host/bin/ntprofd record -s $rate --salt $salt -i 1 $* \
      -o $guest_out/$name.ntp >$guest_out/$name.log 2>&1 </dev/null & echo \$! >/run/ntprofd-$name.pid"
}
wait_ready() {  # NAME
  for _ in $(seq 1 360); do grep -q "recording" "$out/$1.log" 2>/dev/null && return 0; sleep 0.5; done
  echo "ntprofd ($1) did not start:"; cat "$out/$1.log"; return 1
}
stop_agent() {  # VM NAME
  "$tb" ssh "$1" "p=\$(cat /run/ntprofd-$2.pid); kill -INT \$p; for i in \$(seq 1 120); do
      kill -0 \$p 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
}
status=0
for class in "randread 4k 4096" "randwrite 4k 4096" "randread 128k 131072" "randwrite 128k 131072"; do
  set -- $class
  name=$1-$2
  # both agents load at once (each VM has its own vCPU): about 10 s each under emulation
  start_agent target "$name-target" --spdk-target /opt/spdk/build/bin/nvmf_tgt
  start_agent host "$name-host" --role host --transport tcp --device "$dev"
  wait_ready "$name-target"
  wait_ready "$name-host"
  "$tb" ssh host "fio --name=$name --filename=/dev/$dev --direct=1 --ioengine=io_uring --rw=$1 --bs=$2 \
      --iodepth=1 --time_based --runtime=${NTPROF_SPDK_MIXED_SECONDS:-15} --output-format=json \
      --output=$guest_out/$name-fio.json" >/dev/null
  sleep 1.5
  stop_agent host "$name-host"; stop_agent target "$name-target"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json --slowest 100000 >"$out/$name.json"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" --detail >"$out/$name.txt"
  # SPDK's reactor busy-polls the target VM's one emulated vCPU, which it shares with the kernel's
  # network stack and the agent: the delay bdev's poller runs late by whole scheduler slices
  # (measured: storage p50 13.3-18.7 ms for 10 ms). Storage is never below the delay, and stays
  # within twice it.
  # --class: the kernel host's own reads may be there too (udev's blkid probes, check_spdk_run.py)
  python3 "$repo/tests/spdk/real/check_spdk_run.py" "$out/$name.json" "$3" "$delay_us" --storage-above 1.0 \
    --class "${1#rand}" || status=1
done
[ $status = 0 ] && cat "$out/randread-4k.txt"
exit $status
