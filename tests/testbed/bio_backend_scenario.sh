#!/bin/bash
# A namespace on a bio-based disk, enabled and removed while the kernel target's agent records.
# On a blk-mq disk with iostats on (the bed's null_blk drives) the target reads T2 from the request
# at block_rq_issue and leaves block_bio_queue detached; a bio-based disk (device mapper, md; here
# null_blk in bio mode, queue_mode=0) has no request carrying nvmet's bio, so the agent must attach
# block_bio_queue for it (daemon/nvmet_backends.h). Ground truth: the disk's completion delay.
#  1. the agent starts with namespaces 1 and 2 (blk-mq): block_bio_queue stays detached;
#  2. /dev/nullb2 (bio mode, completion after 4 ms) is created (a device event: the agent looks,
#     no namespace uses it), then namespace 3 is enabled on it mid-recording (configfs sends no
#     event) and the host reads it: its first reads (the host kernel's own probing, then a burst of 20)
#     arrive without T2 (counted as missing a stamp), the agent looks at its namespaces and
#     attaches block_bio_queue; from then every record carries T2 (at most the reads the host
#     counted before the attach miss it) and the storage stage (T2 -> T3) is the drive's 4 ms
#     (+-10 %);
#  3. namespace 3 removed (its disk goes: a device event): the agent detaches block_bio_queue.
#
# usage: bio_backend_scenario.sh NTPROFCTL     (the bed up with NVMe/TCP, ntprofd shared)
set -euo pipefail
ntprofctl=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
eval "$("$tb" env)"
nqn=$NTPROF_TB_NQN_TCP nsid=3 disk=nullb2 delay_us=4000 burst=20 reads=150
out=$NTPROF_TB_SHARE/out/bio-backend
guest_out=/mnt/host/out/bio-backend
rm -rf "$out"; mkdir -p "$out"
log() { echo "[bio-backend] $*"; }
tbctl() { "$tb" ssh "$1" bash -s -- "${@:2}" < "$repo/deploy/testbed/guest/tbctl.sh"; }
status=0
check() {  # WHAT COMMAND...: prints ok/FAIL
  if "${@:2}"; then echo "ok:   $1"; else echo "FAIL: $1"; status=1; fi
}
logged() { grep -qs "$1" "$out/target.log"; }

cleanup() {
  "$tb" ssh target 'p=$(cat /run/ntprofd-bio.pid 2>/dev/null) && kill -INT $p 2>/dev/null' || true
  tbctl target namespace-remove "$nqn" "$nsid" >/dev/null 2>&1 || true
  tbctl host host-rescan "$nqn" 2 >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$tb" ssh target "setsid /mnt/host/bin/ntprofd record --role target --transport tcp -s 1 -i 1 \
    -o $guest_out/target.ntp >$guest_out/target.log 2>&1 </dev/null & echo \$! > /run/ntprofd-bio.pid"
for _ in $(seq 1 180); do logged recording && break; sleep 1; done
logged recording || { echo "FAIL: the target agent did not start"; cat "$out/target.log"; exit 1; }
check "blk-mq namespaces only: block_bio_queue left detached" bash -c "! grep -q 'block_bio_queue attached' '$out/target.log'"

# The disk first: its device event makes the agent look at its namespaces, none uses it yet. Then
# the namespace, which sends no device event: only its first records without T2 can tell the agent.
tbctl target bio-disk "$disk" $((delay_us * 1000)) 256 >/dev/null
sleep 3  # past the agent's next interval (-i 1), which reads the namespaces for the disk's event
check "a bio-based disk no namespace uses: block_bio_queue still detached" \
  bash -c "! grep -q 'block_bio_queue attached' '$out/target.log'"
tbctl target namespace-add "$nqn" "$nsid" "/dev/$disk" >/dev/null
dev=$(tbctl host host-rescan "$nqn" 3 | awk -v n="$nsid" '$1 == n {print $2}')
[ -n "$dev" ] || { echo "FAIL: the host has no device for namespace $nsid"; exit 1; }
log "namespace $nsid = target /dev/$disk (bio mode, $delay_us us), host $dev"
fio_reads() {  # COUNT
  "$tb" ssh host "fio --name=bio --filename=$dev --rw=randread --bs=4k --iodepth=1 --ioengine=psync \
      --direct=1 --number_ios=$1 --size=64M --output-format=terse" >/dev/null
}
host_reads() {  # reads the host's kernel completed on the namespace (its head and path devices)
  local d=${dev#/dev/}
  "$tb" ssh host "cat /sys/block/$d/stat /sys/block/${d%n*}c*n${d##*n}/stat 2>/dev/null" |
    awk '{r += $1} END {print r + 0}'
}
fio_reads "$burst"
for _ in $(seq 1 20); do logged "block_bio_queue attached" && break; sleep 0.5; done
check "namespace $nsid enabled: the agent attached block_bio_queue for it" \
  logged "block_bio_queue attached for T2: $nqn nsid $nsid (/dev/$disk): bio-based"
# before the attach: the burst, and the reads the host's kernel made of the new namespace itself
# (partition table, udev's probe)
before_attach=$(host_reads)
log "reads of namespace $nsid before the attach: $before_attach"
fio_reads "$reads"

tbctl target namespace-remove "$nqn" "$nsid" >/dev/null
for _ in $(seq 1 10); do logged "block_bio_queue detached" && break; sleep 0.5; done
check "namespace $nsid removed: the agent detached block_bio_queue" logged "block_bio_queue detached"
"$tb" ssh target 'p=$(cat /run/ntprofd-bio.pid); kill -INT $p; for i in $(seq 1 120); do
    kill -0 $p 2>/dev/null || exit 0; sleep 0.5; done; exit 1'
"$ntprofctl" report "$out/target.ntp" -o json > "$out/report.json"
"$ntprofctl" report "$out/target.ntp" > "$out/report.txt"
python3 - "$out/report.json" "$delay_us" "$before_attach" "$reads" <<'EOF' || status=1
import json, sys
rep = json.load(open(sys.argv[1]))
delay, before_attach, reads = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failed = 0
def check(ok, what):
    global failed
    print(("ok:   " if ok else "FAIL: ") + what)
    failed += not ok
rec = rep["records"]
# the reads before the attach lack T2; every read after it carries it
check(rec["incomplete"] <= before_attach,
      f"{rec['incomplete']} records missing a stamp, at most the {before_attach} reads before the attach")
group = max((g for g in rep["groups"] if g["op"] == "read"), key=lambda g: g["latency"]["n"])
check(group["latency"]["n"] >= reads, f"{group['latency']['n']} complete reads, at least the {reads} after the attach")
stages = {s["id"]: s for s in group["stages"]}
storage = stages["storage"]["p50_us"]
check(abs(storage - delay) <= 0.1 * delay,
      f"storage (T2 -> T3) {storage:.0f} us = the bio-mode disk's {delay:.0f} us +- 10 %")
sys.exit(1 if failed else 0)
EOF
cat "$out/report.txt"
exit $status
