#!/bin/bash
# The command-line contract of `ntprofctl report` / `compare` on files: output on success, and for
# bad input a one-line error naming the file, exit status 2 and nothing on stdout.
set -u
ctl=$1
make_recordings=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$make_recordings" "$dir" || { echo "cannot make recordings"; exit 1; }

passed=0
failed=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
run() {  # run ARGS...: sets out, err, rc
  out=$("$ctl" "$@" 2>"$dir/err"); rc=$?; err=$(cat "$dir/err")
}
bad_input() {  # exit 2, stdout empty, exactly one stderr line mentioning $1
  [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ "$err" == *"$1"* ]]
}

run report "$dir/base/host.ntp" "$dir/base/target.ntp"
check "report of a good run" [ "$rc" = 0 ]
check "report prints the largest line" grep -q "largest: storage (60.00 us), 82 % of the latency" <<<"$out"

run report "$dir/base" -o json
check "json report parses" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["groups"][0]["largest"]=="storage"' <<<"$out"

run report "$dir/base" --slowest 2
check "--slowest 2: a heading and two command lines" \
  [ "$(grep -A3 "^slowest 2 of 100 sampled commands" <<<"$out" | grep -c "  read 4KiB nvme0n1$")" = 2 ]
run report "$dir/base" --slowest 0
check "--slowest 0 is refused" [ "$rc" = 2 ]
run report "$dir/base" --html "$dir/report.html"
check "--html writes the page and prints nothing" \
  eval '[ "$rc" = 0 ] && [ -z "$out" ] && grep -q "^<!DOCTYPE html>" "$dir/report.html"'
run report "$dir/base" --html "$dir/no-such-dir/report.html"
check "--html to an unwritable path: exit 1, one line naming it" \
  eval '[ "$rc" = 1 ] && [ -z "$out" ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *"no-such-dir/report.html"* ]]'

run compare "$dir/base" "$dir/slow"
check "compare names storage" grep -q "grew most: storage, +40.00 us" <<<"$out"

# 1,000 sampled reads (10,000 on the device) in the first second of a 10 s recording.
run report "$dir/idle"
check "throughput over the span the reads ran" \
  grep -q "throughput (all reads on nvme0n1, over the 1.0 s they had I/O): 10009 IOPS" <<<"$out"
check "avg QD span named" grep -q "10.0 s recorded; avg QD over the 1.0 s the group had I/O" <<<"$out"

run compare "$dir/base" "$dir/hostonly"
check "joined vs host only: only shared stages in the table" eval '! grep -q "^  storage " <<<"$out"'
check "joined vs host only: names what was not compared" grep -qF \
  "not compared: network, target driver, storage (only in base); network and target (not recorded) (only in new)" <<<"$out"
check "joined vs host only: no compared stage grew (host block and driver are equal)" \
  grep -q "^  no compared stage grew$" <<<"$out"

run compare "$dir/base" "$dir/hostonly" -o json
check "joined vs host only: json names what was not compared" python3 -c '
import json, sys
g = json.load(sys.stdin)["groups"][0]
assert g["not_compared"] == {"base_only": ["network", "target_driver", "storage"],
                             "new_only": ["network_and_target"]}, g["not_compared"]
assert [s["id"] for s in g["stages"]] == ["host_block", "host_driver", "end_to_end"]' <<<"$out"

head -c 300 "$dir/base/host.ntp" > "$dir/truncated.ntp"
run report "$dir/truncated.ntp"
check "truncated file: exit 2, one line naming it" bad_input "$dir/truncated.ntp: truncated"

: > "$dir/empty.ntp"
run report "$dir/empty.ntp"
check "empty file" bad_input "empty file"

echo "garbage garbage garbage" > "$dir/garbage.ntp"
run report "$dir/garbage.ntp"
check "garbage file" bad_input "wrong magic"

cp "$dir/base/host.ntp" "$dir/newer.ntp"
printf '\x63' | dd of="$dir/newer.ntp" bs=1 seek=8 conv=notrunc status=none
run report "$dir/newer.ntp"
check "newer format version" bad_input "newer than this ntprof reads"

{ printf '\x89NTPROF\n'; echo "garbage garbage garbage"; } > "$dir/magic-then-garbage.ntp"
run report "$dir/magic-then-garbage.ntp"
check "garbage after the magic: corrupt" bad_input "corrupt file header"
check "garbage after the magic: no upgrade advice" eval '[[ "$err" != *upgrade* ]]'

run report "$dir/base/host.ntp" "$dir/rate100/target.ntp"
check "different sample rates" bad_input "same -s"

run report "$dir/does-not-exist.ntp"
check "missing file" bad_input "cannot open"

run report --no-such-flag "$dir/base"
check "unknown flag: exit 2" [ "$rc" = 2 ]
check "unknown flag: usage on stderr" grep -q "Usage:" <<<"$err"
check "unknown flag: nothing on stdout" [ -z "$out" ]

run bogus
check "unknown verb: one line naming it and the verbs" \
  bad_input "unknown command 'bogus'; the commands are report, compare, start, stop, status, watch"

run
check "no verb: exit 2" [ "$rc" = 2 ]
check "no verb: usage on stderr" grep -q "Usage:" <<<"$err"

run report --help
check "--help exits 0" [ "$rc" = 0 ]
check "--help shows examples" grep -q "Examples:" <<<"$out"

# The regression gate: 20,000 reads a run, storage drawn from one distribution, +15 % and +5 %.
run compare "$dir/gate-base" "$dir/gate-up15" --fail-if 'storage.p99 > +10%' \
  --fail-if 'end-to-end.mean > +20us' --junit "$dir/gate.xml" --markdown "$dir/gate.md"
check "gate: +15 % storage p99 crosses a 10 % bound: exit 1" [ "$rc" = 1 ]
check "gate: the comparison, then the crossed bound with its change and interval" \
  grep -qE "^  FAIL  storage.p99 > \+10%  read 4KiB nvme0n1: storage p99 [0-9.]+ -> [0-9.]+ us, \+1[4-6]\.[0-9] % \[\+1[0-9]\.[0-9] %, \+1[0-9]\.[0-9] %\]: whole interval above \+10%$" <<<"$out"
check "gate: the end-to-end mean (+8 us) within +20 us" \
  grep -qE "^  pass  end-to-end.mean > \+20us  read 4KiB nvme0n1: end to end mean .* \+[78]\.[0-9]+ us \[" <<<"$out"
check "gate: verdict line" grep -q "^gate: FAILED, 1 crossed$" <<<"$out"
check "gate: JUnit, one test case per bound, the crossed one failed with its figures" python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
assert [c.get("name") for c in cases] == ["storage.p99 > +10%", "end-to-end.mean > +20us"], cases
f = cases[0].find("failure")
assert f is not None and "whole interval above +10%" in f.get("message"), f
assert cases[1].find("failure") is None and "us [" in cases[1].find("system-out").text
assert root.get("tests") == "2" and root.get("failures") == "1"' "$dir/gate.xml"
check "gate: Markdown summary names the regression" \
  eval 'grep -q "^### ntprof regression gate: \*\*regression\*\*" "$dir/gate.md" && grep -q "^| ❌ | \`storage.p99 > +10%\` |" "$dir/gate.md"'

run compare "$dir/gate-base" "$dir/gate-up5" --fail-if 'storage.p99 > +10%' -o json
check "gate: +5 % passes a 10 % bound: exit 0" [ "$rc" = 0 ]
check "gate: json has the comparison and the gate" python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["gate"]
assert d["groups"] and g["verdict"] == "passed" and g["confidence"] == 0.95, g
c = g["checks"][0]
assert c["verdict"] == "within" and c["unit"] == "fraction" and c["low"] < 0.10 < c["high"] + 0.1, c
assert 0.02 < c["change"] < 0.08 and c["base_commands"] == 20000, c' <<<"$out"

run compare "$dir/gate-base" "$dir/gate-up15" --fail-if 'storage.p99 > +10%' --confidence 0.99 \
  --html "$dir/gate.html"
check "gate with --html: the page written, the verdict printed" \
  eval '[ "$rc" = 1 ] && grep -q "^<!DOCTYPE html>" "$dir/gate.html" && grep -q "^gate (99 % intervals" <<<"$out"'

run compare "$dir/gate-base" "$dir/gate-up15" --fail-if 'storage.p99.99 > +10%'
check "gate: too few commands for p99.99: exit 2, said why" \
  eval '[ "$rc" = 2 ] && grep -q "undecided: .*p99.99 needs at least 100000" <<<"$out" && [[ "$err" == *"could not decide 1 bound"* ]]'
run compare "$dir/gate-base" "$dir/gate-up15" --fail-if 'storag.p99 > +10%'
check "gate: a mistyped stage" bad_input "unknown stage or component 'storag'"
run compare "$dir/gate-base" "$dir/gate-up15" --junit "$dir/x.xml"
check "gate: --junit alone" bad_input "give --fail-if BOUND too"
run compare "$dir/gate-base" "$dir/gate-up15" --fail-if 'storage.p99 > +10%' --confidence 1.5
check "gate: --confidence out of range: exit 2" [ "$rc" = 2 ]
run compare --help
check "compare --help has the gate's grammar" grep -q "STATISTIC  mean, or pN" <<<"$out"
run run --help
check "run --help: the verb's use and the grammar" \
  eval 'grep -q "Exit status: COMMAND" <<<"$out" && grep -q "STATISTIC  mean, or pN" <<<"$out"'
run run name --fail-if 'storage.p99 > +10%' -- true
check "run: --fail-if without --baseline" bad_input "give --baseline BASE"
run run name --baseline "$dir/no-such-dir" -- true
check "run: an unreadable baseline, before any session" bad_input "no-such-dir"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
