#!/bin/bash
# selftest.sh [tcp] [rdma] - prove the testbed end to end and print the numbers README.md quotes:
# boot, fio 4k randread QD1 on nsid 1 (baseline), on nsid 2 (fixed drive delay), on nsid 1 after
# `tb set-drive-delay`, after `tb set-link-delay`, a local fio on the target's null_blk devices,
# a grpc++/protobuf/libbpf/spdlog program started from /mnt/host in both VMs, then `tb down`.
# Env: RUNTIME (fio seconds, default 10), DRIVE_NSEC (500000), LINK_USEC (1000); tb's NTPROF_* knobs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TB=$HERE/tb
RUNTIME=${RUNTIME:-10}
DRIVE_NSEC=${DRIVE_NSEC:-500000}
LINK_USEC=${LINK_USEC:-1000}
[ $# -gt 0 ] || set -- tcp rdma
fail=0
say() { echo "== $*"; }
check() { "$@" || { echo "FAILED: $*"; fail=1; }; }
fio_as() {   # LABEL tb-fio-args...
  local label=$1 out; shift
  out=$("$TB" fio "$@") || { echo "FAILED: tb fio $*"; fail=1; }
  echo "$label $out"
}

libcheck=""
if command -v g++ >/dev/null && pkg-config --exists grpc++ protobuf libbpf spdlog 2>/dev/null; then
  tmp=$(mktemp -d)
  # shellcheck disable=SC2046
  g++ -std=c++20 -O1 -o "$tmp/ntprof-libcheck" "$HERE/libcheck.cpp" $(pkg-config --cflags --libs grpc++ protobuf libbpf spdlog) \
    && libcheck=$tmp/ntprof-libcheck
else
  say "skip libcheck: g++ or the grpc++/protobuf/libbpf/spdlog dev packages are missing"
fi

for tr in "$@"; do
  say "transport $tr"
  t0=$(date +%s.%N)
  dev=$("$TB" up --transport "$tr") || { echo "FAILED: tb up --transport $tr"; fail=1; "$TB" down; continue; }
  say "up in $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}') s, host nsid 1 = $dev"
  fio_as "$tr baseline" --runtime "$RUNTIME"
  fio_as "$tr nsid2" --nsid 2 --runtime "$RUNTIME"
  check "$TB" set-drive-delay "$DRIVE_NSEC"
  fio_as "$tr drive+${DRIVE_NSEC}ns" --runtime "$RUNTIME"
  check "$TB" set-link-delay "$LINK_USEC"
  fio_as "$tr +link${LINK_USEC}us" --runtime "$RUNTIME"
  check "$TB" set-link-delay 0
  check "$TB" set-drive-delay 0
  fio_as "$tr local" --vm target --nsid 1 --runtime 5
  fio_as "$tr local" --vm target --nsid 2 --runtime 5
  if [ -n "$libcheck" ]; then
    "$TB" share "$libcheck" >/dev/null
    for vm in target host; do
      check "$TB" ssh $vm '! ldd /mnt/host/bin/ntprof-libcheck | grep "not found" && /mnt/host/bin/ntprof-libcheck'
    done
  fi
  check "$TB" down
  # nothing of ours may survive tb down
  dir=${NTPROF_TESTBED_DIR:-$(cd "$HERE/../.." && pwd)/build/testbed}
  for f in /proc/[0-9]*/cmdline; do
    [[ $(tr '\0' ' ' < "$f" 2>/dev/null) == *"-pidfile $dir/run/qemu-"* ]] && { echo "FAILED: left over: $f"; fail=1; }
  done
done
[ -z "$libcheck" ] || rm -rf "$(dirname "$libcheck")"
[ $fail = 0 ] && say "selftest passed" || say "selftest FAILED"
exit $fail
