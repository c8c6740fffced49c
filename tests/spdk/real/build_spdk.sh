#!/bin/bash
# Builds SPDK v23.01.1 with ntprof's probe patch (deploy/spdk/v23.01.1/) into a cache outside the
# clone, once per (source tarball, patches, this script): a rerun with the same inputs takes seconds.
#
# usage: build_spdk.sh TARBALL CACHE_DIR        prints the built tree's path (CACHE_DIR/<key>/spdk)
#   TARBALL    spdk-23.01.1.tar.xz (the v23.01.1 tree; dpdk comes from Debian)
#   CACHE_DIR  e.g. /var/cache/ntprof-spdk
# Progress goes to stderr; the build's own output to CACHE_DIR/<key>/build.log.
#        build_spdk.sh --cached TARBALL CACHE_DIR   exit 0 when that build is cached, 1 if not
#
# Only what the tests run is built (2.4 minutes cold on 2 cores shared with a compile, against 9.5
# for SPDK's whole `make`): the libraries and modules (lib/, module/: shared, in build/lib), nvmf_tgt
# (build/bin/nvmf_tgt, which links every bdev/accel/sock/scheduler module) and perf
# (build/examples/perf); scripts/rpc.py is Python (python/spdk), nothing to build. Not built: the
# other apps and examples, build/lib/libspdk.so (the all-in-one linker script), ISA-L and
# ISA-L-crypto (SPDK's only users of them are software crc/xor and the accel module's compression
# and encryption; without them crc32c uses SSE4.2), and debug information (-g0).
# The test bed's mixed-pair scenario copies build/lib, build/bin/nvmf_tgt, scripts/rpc.py and
# python/spdk from this tree into a VM.
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
rmdir "$dir/src"
cd "$dir/spdk"
for p in "${patches[@]}"; do
  log "patch -p1 < $(basename "$p")"
  patch -p1 --quiet < "$p"
done
fail() { grep -E "error|Error" "$dir/build.log" | head -20 >&2; tail -5 "$dir/build.log" >&2; exit 1; }

# v23.01.1's configure has no --without-isal: it turns ISA-L (and ISA-L-crypto, and intel-ipsec-mb)
# off when nasm is older than 2.14, and otherwise runs their autogen and configure (about a minute)
# before make builds them (about 5 minutes). It is shown a nasm that says 2.13.
mkdir -p "$dir/no-isal"
printf '#!/bin/sh\necho "NASM version 2.13.00 (ntprof build_spdk.sh: ISA-L not wanted)"\n' >"$dir/no-isal/nasm"
chmod +x "$dir/no-isal/nasm"
log "configure (shared libraries, USDT, RDMA, Debian's DPDK; no ISA-L)"
PATH="$dir/no-isal:$PATH" ./configure --with-dpdk --with-usdt --with-rdma --with-shared --without-crypto \
  --without-vhost --without-virtio --without-fuse --without-nvme-cuse --disable-tests --disable-unit-tests \
  >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; exit 1; }
grep -q "^CONFIG_ISAL?=n" mk/config.mk || { echo "build_spdk.sh: configure kept ISA-L on" >&2; exit 1; }

# SPDK's top-level make builds every directory (all apps and examples); its sub-makes are run
# directly instead, each with an explicit `all` (some Makefiles' first target is another one).
# The top level's own targets first: the build folders and include/spdk/config.h.
# C_OPT is added to every compile: the <ntprof/...> headers, and no debug information.
mk() { make -j"$(nproc)" C_OPT="-I$dir/include -g0" "$@" >>"$dir/build.log" 2>&1 || fail; }
mk build_dir include/spdk/config.h
log "make -C lib (libraries; log: $dir/build.log)"
mk -C lib all
log "make -C module (bdev, accel, sock, scheduler, event modules)"
mk -C module all
log "make -C app/nvmf_tgt, examples/nvme/perf"
mk -C app/nvmf_tgt all
mk -C examples/nvme/perf all
for f in build/bin/nvmf_tgt build/examples/perf build/lib/libspdk_nvmf.so build/lib/libspdk_nvme.so; do
  [ -e "$f" ] || { echo "build_spdk.sh: $f was not built" >&2; exit 1; }
done
touch "$dir/done"
log "built $dir/spdk"
echo "$dir/spdk"
