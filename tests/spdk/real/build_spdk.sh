#!/bin/bash
# Builds SPDK with ntprof's probe patch (deploy/spdk/<version>/) into a cache outside the clone, once
# per (source tarball, patches, this script): a rerun with the same inputs takes seconds. The version
# comes from the tarball's name (spdk-23.01.1.tar.xz, spdk-25.09.tar.xz), the patches from
# deploy/spdk/v<version>/, applied with `patch -F0`: a hunk that no longer fits exactly fails the
# build instead of landing, with fuzz, in the wrong function (docs/spdk.md, "Porting").
#
# usage: build_spdk.sh TARBALL CACHE_DIR        prints the built tree's path (CACHE_DIR/<key>/spdk)
#   TARBALL    spdk-<version>.tar.xz (dpdk comes from Debian)
#   CACHE_DIR  e.g. /var/cache/ntprof-spdk
# Progress goes to stderr; the build's own output to CACHE_DIR/<key>/build.log.
#        build_spdk.sh --cached TARBALL CACHE_DIR   exit 0 when that build is cached, 1 if not
#        build_spdk.sh --perf TREE                  prints the path of the tree's perf binary
#
# Only what the tests run is built (cold, on 2 cores shared with other builds: v23.01.1 2.5 minutes,
# 2.2 of CPU, against 9.5 for its whole `make`; v25.09 3.9 minutes, 3.2 of CPU): the libraries and modules (lib/, module/: shared, in build/lib), nvmf_tgt
# (build/bin/nvmf_tgt, which links every bdev/accel/sock/scheduler module) and perf
# (v23.01.1: build/examples/perf; from v23.05 on: build/bin/spdk_nvme_perf); scripts/rpc.py is
# Python (python/spdk), nothing to build. Not built: the other apps and examples,
# build/lib/libspdk.so (the all-in-one linker script), ISA-L and ISA-L-crypto (SPDK's only users of
# them are software crc/xor and the accel module's compression and encryption; without them crc32c
# uses SSE4.2), and debug information (-g0).
# The test bed's mixed-pair scenario copies build/lib, build/bin/nvmf_tgt, scripts/rpc.py and
# python/spdk from this tree into a VM.
set -euo pipefail
perf_of() {  # TREE: perf moved from examples/nvme/perf to app/spdk_nvme_perf in v23.05
  if [ -d "$1/app/spdk_nvme_perf" ]; then echo "$1/build/bin/spdk_nvme_perf"; else echo "$1/build/examples/perf"; fi
}
if [ "${1:-}" = --perf ]; then perf_of "$2"; exit 0; fi
check_only=0
[ "${1:-}" = --cached ] && { check_only=1; shift; }
tarball=$1 cache=$2
repo=$(cd "$(dirname "$0")/../../.." && pwd)
log() { echo "[build-spdk +$SECONDS s] $*" >&2; }

[ -f "$tarball" ] || { echo "build_spdk.sh: no SPDK tarball at $tarball" >&2; exit 2; }
version=$(basename "$tarball" | sed -n 's/^spdk-\([0-9][0-9.]*[0-9]\)\.tar\.xz$/\1/p')
patch_dir=$repo/deploy/spdk/v$version
[ -n "$version" ] && [ -d "$patch_dir" ] || {
  echo "build_spdk.sh: no patch for $(basename "$tarball") (expected spdk-<version>.tar.xz with" \
    "deploy/spdk/v<version>/; there are: $(cd "$repo/deploy/spdk" && echo v*/))" >&2
  exit 2
}
patches=("$patch_dir"/*.patch)
key=$( (sha256sum "$tarball" "${patches[@]}" "$repo"/bpf/ntprof_probe.h "$repo"/bpf/ntprof_probe_abi.h \
        "$repo"/bpf/ntprof_sampler.h "$0" | awk '{print $1}') | sha256sum | cut -c1-16)
dir=$cache/$key
if [ $check_only = 1 ]; then
  [ -f "$dir/done" ]
  exit
fi
if [ -f "$dir/done" ]; then
  log "cached build $dir/spdk (v$version)"
  echo "$dir/spdk"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/include/ntprof" "$dir/tools"
# SPDK's sources include <ntprof/ntprof_probe.h>: what the ntprof-dev package installs.
cp "$repo"/bpf/ntprof_probe.h "$repo"/bpf/ntprof_probe_abi.h "$repo"/bpf/ntprof_sampler.h "$dir/include/ntprof/"
log "unpacking $(basename "$tarball") into $dir"
mkdir "$dir/src"
tar -xJf "$tarball" -C "$dir/src"
mv "$dir"/src/spdk-* "$dir/spdk"
rmdir "$dir/src"
cd "$dir/spdk"
for p in "${patches[@]}"; do
  log "patch -p1 -F0 < ${p#"$repo"/}"
  patch -p1 -F0 --quiet < "$p" || { echo "build_spdk.sh: ${p#"$repo"/} does not apply exactly" >&2; exit 1; }
done
fail() { grep -E "error|Error" "$dir/build.log" | head -20 >&2; tail -5 "$dir/build.log" >&2; exit 1; }

# configure has no --without-isal: it turns ISA-L (and ISA-L-crypto, and intel-ipsec-mb) off when
# nasm is older than 2.14, and otherwise runs their autogen and configure (about a minute) before
# make builds them (about 5 minutes). It is shown a nasm that says 2.13. From v23.05 on it first
# insists on the isa-l submodule (isa-l/autogen.sh), which a release tarball may not hold: an
# empty one stands in, never run.
printf '#!/bin/sh\necho "NASM version 2.13.00 (ntprof build_spdk.sh: ISA-L not wanted)"\n' >"$dir/tools/nasm"
[ -e isa-l/autogen.sh ] || { mkdir -p isa-l && : >isa-l/autogen.sh; }
chmod +x "$dir/tools/nasm" isa-l/autogen.sh
# No debug information: a compiler that ends every command line with -g0 (SPDK's own -g comes
# first, and `make C_OPT=` is ignored from v23.09 on). The <ntprof/...> headers' folder goes through
# configure's CFLAGS, which it writes into mk/cc.flags.mk.
printf '#!/bin/sh\nexec cc "$@" -g0\n' >"$dir/tools/cc-g0"
chmod +x "$dir/tools/cc-g0"
options=(--with-dpdk --with-usdt --with-rdma --with-shared --without-crypto --without-vhost --without-virtio
         --without-nvme-cuse --disable-tests --disable-unit-tests)
# What is on by default and not wanted, where this version's configure has it: FUSE (v23.01) became
# the fsdev layer (v24.09: fsdev and its aio module, on by default).
for o in --without-fuse --without-fsdev --without-aio-fsdev; do
  grep -q -- "$o)" configure && options+=("$o")
done
log "configure v$version (shared libraries, USDT, RDMA, Debian's DPDK; no ISA-L)"
PATH="$dir/tools:$PATH" CC="$dir/tools/cc-g0" CFLAGS="-I$dir/include" ./configure "${options[@]}" \
  >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; exit 1; }
grep -q "^CONFIG_ISAL?=n" mk/config.mk || { echo "build_spdk.sh: configure kept ISA-L on" >&2; exit 1; }

# SPDK's top-level make builds every directory (all apps and examples); its sub-makes are run
# directly instead, each with an explicit `all` (some Makefiles' first target is another one).
# The top level's own targets first: the build folders and the generated headers.
perf=$(perf_of "$dir/spdk")
perf_src=app/spdk_nvme_perf
[ -d "$perf_src" ] || perf_src=examples/nvme/perf
mk() { make -j"$(nproc)" "$@" >>"$dir/build.log" 2>&1 || fail; }
mk build_dir include/spdk/config.h include/spdk/version.h
log "make -C lib (libraries; log: $dir/build.log)"
mk -C lib all
log "make -C module (bdev, accel, sock, scheduler, event modules)"
mk -C module all
log "make -C app/nvmf_tgt, $perf_src"
mk -C app/nvmf_tgt all
mk -C "$perf_src" all
for f in build/bin/nvmf_tgt "$perf" build/lib/libspdk_nvmf.so build/lib/libspdk_nvme.so; do
  [ -e "$f" ] || { echo "build_spdk.sh: $f was not built" >&2; exit 1; }
done
touch "$dir/done"
log "built $dir/spdk"
echo "$dir/spdk"
