#!/bin/bash
# The placement check on real ELF files (tests/spdk/placement_stamps.c): the good build passes with
# every stamp named in its function, the broken build fails naming its misplaced, missing and
# doubled stamps, and bad input gets a message saying what to do.
# usage: placement_check_test.sh NTPROFD GOOD_ELF BROKEN_ELF
set -u
ntprofd=$1 good=$2 broken=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check NAME CONDITION...: one line per verdict
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
run() {  # run OUT_PREFIX ARGS...: stdout, stderr and exit status of ntprofd probe
  local out=$1; shift
  "$ntprofd" probe "$@" >"$work/$out.out" 2>"$work/$out.err"
  echo $? >"$work/$out.rc"
}
rc() { cat "$work/$1.rc"; }
has() { grep -qE -- "$2" "$work/$1"; }
lines() { grep -cE -- "$2" "$work/$1"; }

# ---- all in place: table, exit 0, the version read from the binary's "SPDK v23.01.1" ----
run good --spdk-target "$good" --placement
cat "$work/good.out"
check "good target: exit 0" [ "$(rc good)" = 0 ]
check "good target: nothing on stderr" [ ! -s "$work/good.err" ]
check "good target: version from the binary" has good.out "^SPDK v23.01.1 \(version string in $good\)"
check "good target: T5 of RDMA in request_transfer_out" \
  has good.out "T5_REPLY_SENT +0x[0-9a-f]+ +request_transfer_out +request_transfer_out +in place"
check "good target: T0 inlined into nvmf_tcp_capsule_cmd_hdr_handle" \
  has good.out "T0_CAPSULE_RECEIVED +0x[0-9a-f]+ +nvmf_tcp_capsule_cmd_hdr_handle +nvmf_tcp_ntprof_begin +inlined into a caller"
check "good target: both T2 of nvmf_tcp_req_process" [ "$(lines good.out 'T2_BDEV_SUBMIT .* nvmf_tcp_req_process .*in place')" = 2 ]
check "good target: 4 done probes" [ "$(lines good.out '^    nvm[ef]_(tcp|rdma)_done ')" = 4 ]
# 13 target TCP + 10 target RDMA + 9 host TCP + 5 host RDMA sites in the file
check "good target: all 37 sites" has good.out "^placement: all 37 sites where the v23.01.1 contract puts them$"

run goodhost --spdk-host "$good" --placement --spdk-version 23.01.1
check "good host: exit 0" [ "$(rc goodhost)" = 0 ]
check "good host: --spdk-version named" has goodhost.out "^SPDK v23.01.1 \(--spdk-version\), host contract"

run goodjson --spdk-target "$good" --placement --json
check "good json: exit 0" [ "$(rc goodjson)" = 0 ]
check "good json: ok, no problems, 37 sites" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is True and j["problems"] == [] and len(j["sites"]) == 37, j
assert j["spdk_version"] == "v23.01.1" and j["role"] == "target"
assert {"object", "address", "stamp", "function", "expected", "verdict"} <= set(j["sites"][0])
' "$work/goodjson.out"

# ---- misplaced, missing and doubled: exit 1, one line each naming probe, found, expected, fix ----
run broken --spdk-target "$broken" --placement
cat "$work/broken.err"
check "broken target: exit 1" [ "$(rc broken)" = 1 ]
check "broken target: 4 problems, one line each" [ "$(wc -l <"$work/broken.err")" = 4 ]
check "broken target: every line says what to do" [ "$(lines broken.err 'patch -p1 -F0')" = 4 ]
check "broken target: T5 misplaced in request_transfer_in" has broken.err \
  "^ntprofd probe: MISPLACED T5_REPLY_SENT: found in request_transfer_in of $(basename "$broken"), the contract \(SPDK v23.01.1\) expects .*request_transfer_out \(lib/nvmf/rdma.c\)"
check "broken target: T5 missing from request_transfer_out" has broken.err \
  "^ntprofd probe: MISSING T5_REPLY_SENT: no site in request_transfer_out .*lib/nvmf/rdma.c"
check "broken target: T3 missing from nvmf_tcp_req_complete" has broken.err \
  "^ntprofd probe: MISSING T3_BDEV_DONE: no site in nvmf_tcp_req_complete of lib/nvmf/tcp.c"
check "broken target: T_R2T_SENT doubled" has broken.err \
  "^ntprofd probe: DOUBLED T_R2T_SENT: 2 sites in nvmf_tcp_send_r2t_pdu of .*, the contract expects 1 in nvmf_tcp_send_r2t_pdu"
check "broken target: the table marks them" [ "$(lines broken.out 'MISPLACED|DOUBLED')" = 3 ]
check "broken target: problem count" has broken.out "^placement: 4 problems$"

run brokenjson --spdk-target "$broken" --placement --json
check "broken json: ok false, 4 problems" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is False and len(j["problems"]) == 4, j
' "$work/brokenjson.out"

# ---- bad input: a clear error, exit 1 (2 for flags) ----
run unknown --spdk-target "$good" --placement --spdk-version v99.01
check "unknown version: exit 1, names the known ones" \
  bash -c "[ $(rc unknown) = 1 ] && grep -q 'no placement contract for SPDK v99.01 (from --spdk-version); contracts: v23.01.1, v25.09' '$work/unknown.err'"
check "unknown version: says where a port adds its rules" has unknown.err "spdk_placement_contract.cpp"
# the ported contract: the same functions, so the good file passes it too, and the broken one's T5
# in request_transfer_in is misplaced there as well
run v2509 --spdk-target "$good" --placement --spdk-version v25.09
check "v25.09 contract: the good file passes" [ "$(rc v2509)" = 0 ]
run v2509broken --spdk-target "$broken" --placement --spdk-version v25.09
check "v25.09 contract: T5 misplaced in request_transfer_in" has v2509broken.err \
  "^ntprofd probe: MISPLACED T5_REPLY_SENT: found in request_transfer_in of .*\(SPDK v25.09\) expects .*request_transfer_out \(lib/nvmf/rdma.c\)"
cp "$good" "$work/stripped" && strip "$work/stripped"
run stripped --spdk-target "$work/stripped" --placement
check "stripped: exit 1, asks for the unstripped build" \
  bash -c "[ $(rc stripped) = 1 ] && grep -q 'has no symbol table' '$work/stripped.err'"
run noprobes --spdk-target /bin/true --placement
check "no ntprof notes: exit 1, points at the patch" \
  bash -c "[ $(rc noprobes) = 1 ] && grep -q 'hold no ntprof notes' '$work/noprobes.err'"
sed 's/SPDK v23/SPDK x23/' "$good" >"$work/noversion" && chmod +x "$work/noversion"
run noversion --spdk-target "$work/noversion" --placement
check "no version string: exit 1, asks for --spdk-version" \
  bash -c "[ $(rc noversion) = 1 ] && grep -q 'pass --spdk-version' '$work/noversion.err'"
run pid --spdk-target $$ --placement
check "a PID: exit 1, asks for the binary" \
  bash -c "[ $(rc pid) = 1 ] && grep -q 'checks a BINARY, not a PID' '$work/pid.err'"
run flags --placement --role target
check "--placement without a binary: exit 2" [ "$(rc flags)" = 2 ]
exit $fail
