#!/bin/bash
# Builds SPDK v23.01.1 with ntprof's probe patch (deploy/spdk/v23.01.1/) into a cache outside the
# clone, once per (source tarball, patches): a rerun with the same inputs takes seconds.
#
# usage: build_spdk.sh TARBALL CACHE_DIR        prints the built tree's path (CACHE_DIR/<key>/spdk)
#   TARBALL    spdk-23.01.1.tar.xz (the v23.01.1 tree with isa-l; dpdk comes from Debian)
#   CACHE_DIR  e.g. /var/cache/ntprof-spdk
# Progress goes to stderr; the build's own output to CACHE_DIR/<key>/build.log.
#        build_spdk.sh --cached TARBALL CACHE_DIR   exit 0 when that build is cached, 1 if not
set -euo pipefail
check_only=0
[ "${1:-}" = --cached ] && { check_only=1; shift; }
tarball=$1 cache=$2
repo=$(cd "$(dirname "$0")/../../.." && pwd)
patches=("$repo"/deploy/spdk/v23.01.1/*.patch)
log() { echo "[build-spdk +$SECONDS s] $*" >&2; }

[ -f "$tarball" ] || { echo "build_spdk.sh: no SPDK tarball at $tarball" >&2; exit 2; }
key=$( (sha256sum "$tarball" "${patches[@]}" "$repo"/bpf/ntprof_probe.h "$repo"/bpf/ntprof_probe_abi.h \
        "$repo"/bpf/ntprof_sampler.h "$0" | awk '{print $1}') | sha256sum | cut -c1-16)
dir=$cache/$key
if [ $check_only = 1 ]; then
  [ -f "$dir/done" ]
  exit
fi
if [ -f "$dir/done" ]; then
  log "cached build $dir/spdk"
  echo "$dir/spdk"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/include/ntprof"
# SPDK's sources include <ntprof/ntprof_probe.h>: what the ntprof-dev package installs.
cp "$repo"/bpf/ntprof_probe.h "$repo"/bpf/ntprof_probe_abi.h "$repo"/bpf/ntprof_sampler.h "$dir/include/ntprof/"
log "unpacking $(basename "$tarball") into $dir"
mkdir "$dir/src"
tar -xJf "$tarball" -C "$dir/src"
mv "$dir"/src/spdk-* "$dir/spdk"
cd "$dir/spdk"
for p in "${patches[@]}"; do
  log "patch -p1 < $(basename "$p")"
  patch -p1 --quiet < "$p"
done
log "configure (shared libraries, USDT, RDMA, Debian's DPDK)"
./configure --with-dpdk --with-usdt --with-rdma --with-shared --without-crypto --without-vhost \
  --without-virtio --without-fuse --without-nvme-cuse --disable-tests --disable-unit-tests \
  >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; exit 1; }
log "make -j$(nproc) (about 20 minutes on 2 cores; log: $dir/build.log)"
make -j"$(nproc)" CONFIG_IPSEC_MB=n C_OPT="-I$dir/include" >>"$dir/build.log" 2>&1 \
  || { grep -E "error|Error" "$dir/build.log" | head -20 >&2; exit 1; }
touch "$dir/done"
log "built $dir/spdk"
echo "$dir/spdk"
