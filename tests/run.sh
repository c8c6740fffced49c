#!/bin/bash
# tests/run.sh - the one command that runs every ntprof test on a fresh Debian 12 machine (as root):
# installs the build dependencies, builds, runs the unit and kernel tests (CTest), then the
# end-to-end scenarios in the two-VM test bed (skip them with NTPROF_SKIP_TESTBED=1).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${NTPROF_BUILD_DIR:-$repo/build}
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }

step "dependencies"
"$repo/deploy/install-deps.sh"

step "build ($build)"
# Compiled objects are cached on this machine, outside the clone (ccache): CI builds a fresh clone
# of what was mostly built before, about 10 of its minutes without the cache. Paths under the clone
# are hashed relative to it (CCACHE_BASEDIR, NOHASHDIR), so another clone of the same sources hits.
export CCACHE_DIR=${NTPROF_CCACHE_DIR:-/var/cache/ntprof-ccache} CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  ccache --zero-stats >/dev/null
fi
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)"

step "Unix Makefiles build of the BPF skeletons"
# The documented `cmake -S . -B DIR && cmake --build DIR` uses the default generator, Unix
# Makefiles, which (unlike Ninja) cannot build a custom command's output for a target in another
# directory. vmlinux.h is the one such output the tree has, used by the BPF skeletons of bpf/ and
# tests/, so building those targets checks what can break (about a minute); the whole tree a second
# time would add ~8 minutes of compiling the same C++ to CI's 75.
makefiles_build=$build/unix-makefiles
cmake -S "$repo" -B "$makefiles_build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
skeletons=$(make -C "$makefiles_build" help | sed -n 's/^\.\.\. \(ntprof_bpf_.*_gen\)$/\1/p')
[ -n "$skeletons" ] || { echo "run.sh: the Makefiles build has no ntprof_bpf_*_gen targets" >&2; exit 1; }
# shellcheck disable=SC2086  # one target name per word
cmake --build "$makefiles_build" -j"$(nproc)" --target $skeletons >/dev/null

step "unit and kernel tests"
# tracepoints are listed only once tracefs is mounted
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
# --timeout: a hung test fails after 5 minutes instead of holding CI
ctest --test-dir "$build" --output-on-failure -j2 --timeout 300

# Real SPDK, each version the project ships a patch for (deploy/spdk/v<version>/): built once per
# (tarball, patches, build script) into a cache outside the clone (only nvmf_tgt, perf and the
# libraries they link: cold on 2 cores about 2.5 minutes for v23.01.1, 3.5 for v25.09), the
# placement check run on the build, then nvmf_tgt + perf recorded by ntprofd (about a minute each);
# the test bed's mixed pair runs the v23.01.1 build in a VM (about 4 minutes more of the bed's).
# Whenever a tarball is found: NTPROF_SPDK=build (the default) builds it when it is not cached;
# auto runs the SPDK tests only when a build is cached; skip never. The tarballs: the first
# spdk-<version>.tar.xz found up to two folders deep beside the clone or beside its parent
# ($NTPROF_SPDK_TARBALL names the v23.01.1 one, $NTPROF_SPDK25_TARBALL the v25.09 one).
spdk_mode=${NTPROF_SPDK:-build}
spdk_cache=${NTPROF_SPDK_CACHE:-/var/cache/ntprof-spdk}
real_spdk() {  # VERSION TARBALL TREE_VARIABLE: build, check, pair test; exports TREE_VARIABLE
  local version=$1 tarball=$2 tree_var=$3 tree
  # (find, not ls: a pattern that matches nothing must not end this set -e script)
  [ -n "$tarball" ] || tarball=$(find "$(dirname "$repo")" "$(dirname "$(dirname "$repo")")" \
    -mindepth 2 -maxdepth 3 -name "spdk-$version.tar.xz" -not -path "$repo/*" 2>/dev/null | head -1 || true)
  if [ -z "$tarball" ]; then
    step "real SPDK v$version: skipped (no spdk-$version.tar.xz found beside the clone)"
    return
  fi
  if [ "$spdk_mode" != build ] && ! "$repo/tests/spdk/real/build_spdk.sh" --cached "$tarball" "$spdk_cache" >/dev/null 2>&1; then
    step "real SPDK v$version: skipped (no cached build in $spdk_cache; NTPROF_SPDK=build builds it)"
    return
  fi
  step "real SPDK v$version: build (cached in $spdk_cache), placement check, nvmf_tgt + perf recorded by ntprofd"
  tree=$("$repo/tests/spdk/real/build_spdk.sh" "$tarball" "$spdk_cache")
  export "$tree_var=$tree"
  # the placement check (seconds): every stamp of the patch in the function its contract names
  # (the version read from the build's libspdk_* libraries, as a porter runs it; docs/spdk.md)
  LD_LIBRARY_PATH=$tree/build/lib "$build/daemon/ntprofd" probe --placement \
    --spdk-target "$tree/build/bin/nvmf_tgt"
  LD_LIBRARY_PATH=$tree/build/lib "$build/daemon/ntprofd" probe --placement \
    --spdk-host "$("$repo/tests/spdk/real/build_spdk.sh" --perf "$tree")"
  "$repo/tests/spdk/real/spdk_pair_test.sh" "$tree" "$build/daemon/ntprofd" "$build/client/ntprofctl" \
    "$build/test-output/spdk-$version"
}
if [ "$spdk_mode" != skip ]; then
  real_spdk 23.01.1 "${NTPROF_SPDK_TARBALL:-}" NTPROF_SPDK_TREE  # the test bed's mixed pair runs it in a VM
  real_spdk 25.09 "${NTPROF_SPDK25_TARBALL:-}" NTPROF_SPDK25_TREE
  # the check catches v23.01.1's T5 hunk where plain `patch` puts it in v25.09 (about 15 s)
  if [ -n "${NTPROF_SPDK25_TREE:-}" ]; then
    "$repo/tests/spdk/real/misplaced_t5_test.sh" "$NTPROF_SPDK25_TREE" "$build/daemon/ntprofd"
  fi
fi

if [ "${NTPROF_SKIP_TESTBED:-0}" != 1 ] && [ -x "$repo/tests/testbed/run-scenarios.sh" ]; then
  step "test bed scenarios"
  # the guest's debootstrap tree, .debs and kernels outlive the clone (build-image.sh)
  export NTPROF_TESTBED_CACHE=${NTPROF_TESTBED_CACHE:-/var/cache/ntprof-testbed}
  "$repo/tests/testbed/run-scenarios.sh" "$build"
  step "overhead regression check: hook instructions per I/O (its own bed, ports 22700-22705)"
  # a deterministic count, not a timed figure: fails when a change adds instructions to the hooks
  # (docs/overhead.md); about 6-9 minutes
  "$repo/tests/bench/insn_overhead_check.sh" "$build"
fi
[ ${#launcher[@]} = 0 ] || echo "ccache: $(ccache --show-stats 2>/dev/null | grep -m1 'Hits' | tr -s ' ')"
step "all tests passed"
