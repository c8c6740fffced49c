#!/bin/bash
# A mixed pair in the test bed: real SPDK nvmf_tgt (built with ntprof's patch) in the target VM,
# the Linux kernel NVMe/TCP or NVMe/RDMA (soft-RoCE) host in the host VM. ntprofd records the SPDK target through its USDT
# probes (--spdk-target) and the kernel host through its BPF programs; the two files join per
# command on (NQN, cntlid, qid, cid) with nothing shared but the sampling salt. Checked per class
# (4 KiB and 128 KiB reads and writes; the 128 KiB writes through R2T / an RDMA READ): every host
# command matched, no negative stage, storage at least SPDK's delay bdev (see below), bytes = the
# I/O size.
#
# usage: spdk_mixed_scenarios.sh SPDK_TREE NTPROFCTL [tcp|rdma]
#   (the bed up with that transport - rdma: soft-RoCE on both VMs - and ntprofd shared)
set -euo pipefail
spdk=$1 ntprofctl=$2 transport=${3:-tcp}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
source "$repo/tests/spdk/real/delay_target.sh"
source "$repo/tests/testbed/spdk_in_vm.sh"
eval "$("$tb" env)"
rate=2 salt=$RANDOM delay_us=${NTPROF_SPDK_DELAY_US:-10000} port=4430
nqn=nqn.2016-06.io.spdk:ntprof-mixed
run=spdk-mixed-$transport-$(date +%s)   # a fresh folder each run: the VMs' 9p view of a recreated one can be stale
out=$NTPROF_TB_SHARE/out/$run guest_out=/mnt/host/out/$run
log() { echo "[spdk-mixed] $*"; }
mkdir -p "$out"

# SPDK's libraries, nvmf_tgt and rpc.py, copied into the target VM's own disk (not run from 9p)
stage_spdk target "$spdk" build/lib build/bin/nvmf_tgt scripts/rpc.py python/spdk

cleanup() {
  "$tb" ssh host "nvme disconnect -n $nqn" >/dev/null 2>&1 || true
  "$tb" ssh target 'p=$(cat /run/nvmf_tgt.pid) && kill $p && while kill -0 $p; do sleep 0.2; done' \
    >/dev/null 2>&1 || true
  [ "$transport" = tcp ] || hugepages target 0 >/dev/null 2>&1 || true  # the VM's memory back for what follows
}
trap cleanup EXIT

log "nvmf_tgt ($transport) in the target VM, delay bdev ${delay_us} us, listening on $NTPROF_TB_TARGET_IP:$port"
# a target left over from a run that was killed holds SPDK's core lock
"$tb" ssh target "pkill -9 -x nvmf_tgt; sleep 0.5; rm -f /var/tmp/spdk_cpu_lock_*" || true
case $transport in
  # -s 512: SPDK's buffer pools (8 KiB and 132 KiB iobufs) do not fit in 256 MiB
  tcp) memory="-s 512 --env-context='--no-huge --legacy-mem'" ;;
  # 256 hugepages (512 MiB of the VM's 1.5 GiB); DPDK takes what it needs of them as it goes
  rdma) hugepages target 256; memory= ;;
  *) echo "usage: spdk_mixed_scenarios.sh SPDK_TREE NTPROFCTL [tcp|rdma]"; exit 2 ;;
esac
"$tb" ssh target "LD_LIBRARY_PATH=/opt/spdk/build/lib setsid /opt/spdk/build/bin/nvmf_tgt -m 0x1 $memory \
    --no-pci --iova-mode va -r /run/spdk.sock >$guest_out/nvmf_tgt.log 2>&1 </dev/null & echo \$! >/run/nvmf_tgt.pid"
for _ in $(seq 1 120); do "$tb" ssh target "test -S /run/spdk.sock" && break; sleep 1; done
"$tb" ssh target "test -S /run/spdk.sock" || { echo "nvmf_tgt did not start:"; tail -20 "$out/nvmf_tgt.log"; exit 1; }
write_delay_target_rpcs "$out/setup.rpc" 64 "$delay_us" "$nqn" NTPROFMIXED1 "$transport" "$NTPROF_TB_TARGET_IP" "$port"
"$tb" ssh target "python3 /opt/spdk/scripts/rpc.py -s /run/spdk.sock" <"$out/setup.rpc" >"$out/rpc.out" 2>&1 \
  || { echo "rpc.py failed:"; cat "$out/rpc.out"; tail -20 "$out/nvmf_tgt.log"; exit 1; }
"$tb" ssh host "nvme connect -t $transport -a $NTPROF_TB_TARGET_IP -s $port -n $nqn" >/dev/null
dev=
for _ in $(seq 1 30); do
  # the namespace's block device (the multipath head nvmeXnY, not a path nvmeXcYnZ)
  dev=$("$tb" ssh host "for b in /sys/block/nvme*n*; do case \${b##*/} in *c*) continue;; esac;
      [ \"\$(cat \$b/device/subsysnqn 2>/dev/null)\" = $nqn ] && echo \${b##*/}; done; true" | head -1) || true
  [ -n "$dev" ] && break; sleep 1
done
[ -n "$dev" ] || { echo "the kernel host did not get a namespace of $nqn"; exit 1; }
log "kernel host connected: /dev/$dev"

status=0
for class in "randread 4k 4096" "randwrite 4k 4096" "randread 128k 131072" "randwrite 128k 131072"; do
  set -- $class
  name=$1-$2
  # both agents load at once (each VM has its own vCPU): about 10 s each under emulation
  start_agent target "$name-target" --spdk-target /opt/spdk/build/bin/nvmf_tgt
  start_agent host "$name-host" --role host --transport $transport --device "$dev"
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
  # network stack (and over RDMA, soft-RoCE's packet processing) and the agent: the delay bdev's
  # poller runs late by whole scheduler slices. Over TCP storage p50 measured 13.3-18.7 ms for 10 ms:
  # never below the delay, within twice it. Over RDMA +84 to +196 % (docs/spdk.md, "SPDK over
  # NVMe/RDMA"): no bound on the median holds, the fastest command does.
  # --class: the kernel host's own reads may be there too (udev's blkid probes, check_spdk_run.py)
  case $transport in tcp) storage="--storage-above 1.0" ;; rdma) storage="--storage-floor 0.1" ;; esac
  python3 "$repo/tests/spdk/real/check_spdk_run.py" "$out/$name.json" "$3" "$delay_us" $storage \
    --class "${1#rand}" || status=1
done
[ $status = 0 ] && cat "$out/randread-4k.txt"
exit $status
