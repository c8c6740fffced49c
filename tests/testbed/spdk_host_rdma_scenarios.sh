#!/bin/bash
# SPDK's NVMe/RDMA host in the test bed: SPDK's perf (built with ntprof's patch) in the host VM over
# soft-RoCE against the bed's kernel NVMe/RDMA target (nvmet-rdma on null_blk, nsid 1). ntprofd
# records perf through its USDT probes (--spdk-host) and the kernel target through its BPF programs;
# the two files join per command with nothing shared but the sampling salt. Ground truth is the
# null_blk drive's completion delay (tb set-drive-delay). Checked per class (4 KiB and 128 KiB reads
# and writes at QD1; the 4 KiB writes inline in the command capsule, the 128 KiB ones fetched by the
# target's RDMA READ): every command matched after the session's edges, no negative stage, bytes =
# the I/O size, status 0, storage never below the delay and its minimum within 10 % of it.
# Sequential I/O, as in tests/spdk/real/spdk_pair_test.sh: at QD1 every command has cid 0, and the
# join tells them apart by their LBA.
#
# usage: spdk_host_rdma_scenarios.sh SPDK_TREE NTPROFCTL    (the bed up with rdma, ntprofd shared)
set -euo pipefail
spdk=$1 ntprofctl=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
source "$repo/tests/testbed/spdk_in_vm.sh"
eval "$("$tb" env)"
rate=2 salt=$RANDOM delay_us=${NTPROF_SPDK_DELAY_US:-10000}
nqn=${NTPROF_TB_NQN_RDMA:-$NTPROF_TB_NQN}
run=spdk-host-rdma-$(date +%s)   # a fresh folder each run: the VMs' 9p view of a recreated one can be stale
out=$NTPROF_TB_SHARE/out/$run guest_out=/mnt/host/out/$run
log() { echo "[spdk-host-rdma] $*"; }
mkdir -p "$out"

# perf's path in the tree: build/examples/perf (v23.01.1), build/bin/spdk_nvme_perf (v23.05 on)
perf=$("$repo/tests/spdk/real/build_spdk.sh" --perf "$spdk")
perf=${perf#"$spdk"/}
stage_spdk host "$spdk" build/lib "$perf"
cleanup() {
  "$tb" ssh host "pkill -9 -x ${perf##*/}" >/dev/null 2>&1 || true
  hugepages host 0 >/dev/null 2>&1 || true
  "$tb" set-drive-delay 0 >/dev/null 2>&1 || true
}
trap cleanup EXIT
# perf's memory: 128 hugepages, of which it takes 256 MiB (-s 256); see spdk_in_vm.sh
hugepages host 128
"$tb" set-drive-delay $((delay_us * 1000)) >/dev/null
log "perf in the host VM over RDMA to $NTPROF_TB_TARGET_IP:${NTPROF_TB_PORT_RDMA:-4421} ($nqn, nsid 1), drive delay ${delay_us} us"

status=0
for class in "read 4096" "write 4096" "read 131072" "write 131072"; do
  set -- $class
  name=$1-$2
  start_agent target "$name-target" --role target --transport rdma
  # the binary is known before perf runs: the agent attaches when perf maps libspdk_nvme.so
  start_agent host "$name-host" --spdk-host /opt/spdk/$perf
  wait_ready "$name-target"
  wait_ready "$name-host"
  "$tb" ssh host "LD_LIBRARY_PATH=/opt/spdk/build/lib /opt/spdk/$perf -c 0x1 -s 256 \
      --iova-mode va -q 1 -o $2 -w $1 -t ${NTPROF_SPDK_HOST_SECONDS:-15} \
      -r 'trtype:RDMA adrfam:IPv4 traddr:$NTPROF_TB_TARGET_IP trsvcid:${NTPROF_TB_PORT_RDMA:-4421} subnqn:$nqn ns:1'" \
    >"$out/$name-perf.log" 2>&1 || { echo "perf failed:"; tail -20 "$out/$name-perf.log"; status=1; }
  sleep 1.5  # the agents' last interval
  stop_agent host "$name-host"; stop_agent target "$name-target"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" -o json --slowest 100000 >"$out/$name.json"
  "$ntprofctl" report "$out/$name-host.ntp" "$out/$name-target.ntp" --detail >"$out/$name.txt"
  # the median: see docs/spdk.md, "SPDK over NVMe/RDMA"
  python3 "$repo/tests/spdk/real/check_spdk_run.py" "$out/$name.json" "$2" "$delay_us" --storage-floor 0.1 \
    || status=1
done
[ $status = 0 ] && cat "$out/read-4096.txt"
exit $status
