#!/bin/bash
# The trap the placement check exists for, on a real build: v23.01.1's hunk for T5 in
# request_transfer_out() (lib/nvmf/rdma.c), applied to v25.09 the way plain `patch` does (fuzz 2),
# lands in request_transfer_in(), which now ends alike; `patch` reports success and the library
# builds. The check must then fail, naming the stamp and the function that holds it.
# It works on a copy of the v25.09 build of build_spdk.sh that shares the built files (hard links,
# beside the tree in the cache), in which only rdma.c changes and only libspdk_nvmf is rebuilt
# (about 10 s); every file the rebuild writes is first unshared, so the cached build stays as it
# was (checked).
#
# usage: misplaced_t5_test.sh SPDK_V25_TREE NTPROFD
set -euo pipefail
tree=$1 ntprofd=$(realpath "$2")
repo=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(dirname "$tree")/misplaced-t5
log() { echo "[misplaced-t5 +$SECONDS s] $*"; }
fail() { echo "FAIL: $*"; exit 1; }
trap 'rm -rf "$work"' EXIT
rm -rf "$work"
mkdir -p "$work"
cp -al "$tree" "$work/spdk"
cd "$work/spdk"
# the files the rebuild of lib/nvmf writes (objects, archive, library, pkg-config files): own copies
for f in lib/nvmf/* build/lib/libspdk_nvmf.* build/lib/pkgconfig/spdk_nvmf.pc build/lib/pkgconfig/tmp/spdk_nvmf.pc; do
  if [ -f "$f" ] && [ ! -L "$f" ]; then cp -p "$f" "$f.own" && mv "$f.own" "$f"; fi
done
cached_sum=$(sha256sum <"$tree/build/lib/libspdk_nvmf.so")

# v25.09's own T5 out, v23.01.1's T5 hunk in, as `patch` would apply it
sed -i '/NTPROF_PROBE_T5_REPLY_SENT/d' lib/nvmf/rdma.c
awk '/^diff --git/ { in_rdma = ($0 ~ / a\/lib\/nvmf\/rdma\.c /); header = ""; in_hunk = 0 }
     in_rdma && /^(---|\+\+\+) / { header = header $0 "\n" }
     in_rdma && /^@@/ { in_hunk = ($0 ~ /request_transfer_out/); if (in_hunk) printf "%s", header }
     in_rdma && in_hunk' "$repo/deploy/spdk/v23.01.1/ntprof-probes.patch" >"$work/t5.patch"
grep -q NTPROF_PROBE_T5_REPLY_SENT "$work/t5.patch" || fail "no T5 hunk for rdma.c in the v23.01.1 patch"
patch -p1 <"$work/t5.patch" | tee "$work/patch.out"
grep -q "with fuzz" "$work/patch.out" || fail "the v23.01.1 T5 hunk applied without fuzz: the trap is gone?"
log "relinking libspdk_nvmf with T5 where the fuzz put it"
make -C lib/nvmf all >"$work/make.log" 2>&1 || { tail -20 "$work/make.log"; fail "rebuilding lib/nvmf"; }
[ "$(sha256sum <"$tree/build/lib/libspdk_nvmf.so")" = "$cached_sum" ] || fail "the cached build was changed"

set +e
LD_LIBRARY_PATH=$work/spdk/build/lib "$ntprofd" probe --placement --spdk-target "$work/spdk/build/bin/nvmf_tgt" \
  >"$work/check.out" 2>"$work/check.err"
rc=$?
set -e
cat "$work/check.err"
[ $rc = 1 ] || fail "the placement check exited $rc, not 1"
# request_transfer_in is inlined into its one caller: the note is found there
grep -qE "^ntprofd probe: MISPLACED T5_REPLY_SENT: found in (request_transfer_in|nvmf_rdma_request_process) of libspdk_nvmf\.so.*expects .*request_transfer_out \(lib/nvmf/rdma\.c\)" \
  "$work/check.err" || fail "no MISPLACED T5_REPLY_SENT naming where it was found"
grep -q "^ntprofd probe: MISSING T5_REPLY_SENT: no site in request_transfer_out of lib/nvmf/rdma.c" "$work/check.err" \
  || fail "no MISSING T5_REPLY_SENT for request_transfer_out"
[ "$(wc -l <"$work/check.err")" = 2 ] || fail "other problems than the misplaced T5"
log "ok: the misplaced T5 is caught"
