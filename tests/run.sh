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
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j"$(nproc)"

step "unit and kernel tests"
# tracepoints are listed only once tracefs is mounted
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
# --timeout: a hung test fails after 5 minutes instead of holding CI
ctest --test-dir "$build" --output-on-failure -j2 --timeout 300

if [ "${NTPROF_SKIP_TESTBED:-0}" != 1 ] && [ -x "$repo/tests/testbed/run-scenarios.sh" ]; then
  step "test bed scenarios"
  "$repo/tests/testbed/run-scenarios.sh" "$build"
fi
step "all tests passed"
