#!/bin/bash
# demo.sh - ntprof's main job on a built-in demo: boots the two-VM test bed (real Linux NVMe/TCP or,
# with --transport rdma, NVMe/RDMA over soft-RoCE), records the target and the host with ntprofd
# while fio runs, prints the joined stage report, and tears the VMs down.
#
#   ./deploy/demo.sh [--transport tcp|rdma] [--runtime SECONDS] [-s N] [--detail]
#
# Run as root on Debian 12; installs what it needs. Recordings stay in build/testbed/share/out/demo.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${NTPROF_BUILD_DIR:-$repo/build}
transport=tcp runtime=20 rate=10 detail=""
while [ $# -gt 0 ]; do
  case $1 in
    --transport) transport=$2; shift ;;
    --runtime) runtime=$2; shift ;;
    -s) rate=$2; shift ;;
    --detail) detail=--detail ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
step() { echo "== $*" >&2; }

[ "$(id -u)" = 0 ] || { echo "demo.sh: run as root (it installs packages and boots VMs)" >&2; exit 1; }
step "dependencies"
"$repo/deploy/install-deps.sh" >&2
step "build"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j"$(nproc)" ntprofd ntprofctl >&2
export NTPROF_BUILD_DIR=$build

tb=$repo/deploy/testbed/tb
trap '"$tb" down >/dev/null 2>&1 || true' EXIT
step "test bed up ($transport)"
"$tb" up --transport "$transport" >&2
step "recording host and target during ${runtime}s of fio 4KiB randread QD1 (1 in $rate sampled)"
run=$("$repo/deploy/testbed/record-run.sh" demo -s "$rate" --runtime "$runtime")
step "report: ntprofctl report $run $detail"
"$build/client/ntprofctl" report "$run" $detail
