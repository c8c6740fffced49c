#!/bin/bash
# The control-plane verbs of ntprofctl against a real ntprof-collector and two replaying agents:
# a session's report is the file report of the same records, export round-trips, compare mixes
# sessions and files, and errors have the promised exit status and one-line messages.
#   ntprofctl_collector_test.sh NTPROFCTL NTPROF_COLLECTOR REPLAY_AGENT MAKE_TEST_RECORDINGS
set -uo pipefail
ctl=$1 collector=$2 replay=$3 make_recordings=$4
# shellcheck source=harness.sh
source "$(dirname "$0")/harness.sh"
expect_status() {  # expected, description, command...
  local want=$1 what=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" = "$want" ] || fail "$what: exit $got, wanted $want ($(head -c 300 "$work/err"))"
}

"$make_recordings" "$work/rec" || exit 1
sock="unix:$work/collector.sock"
export NTPROF_COLLECTOR=$sock
"$collector" --listen "$sock" --data-dir "$work/data" --metrics-listen "" --log-level warn &
pids+=($!)
for _ in $(seq 50); do "$ctl" status >/dev/null 2>&1 && break; sleep 0.2; done

expect_status 2 "start with no agents" "$ctl" start test -s 10
grep -q "no agents connected" "$work/err" || fail "start with no agents: message"

replay_both_halves "$replay" "$sock"

# A watch from before the start sees the session's records: its ndjson has one type per field.
"$ctl" watch -o ndjson --count 5 >"$work/watch.ndjson" 2>"$work/watch.err" &
watch_pid=$!
for _ in $(seq 50); do [ -s "$work/watch.ndjson" ] && break; sleep 0.1; done
# A watch of session test started before the session (as a script may): it waits for the start,
# follows the session and ends with it.
"$ctl" watch test -o ndjson >"$work/watch-test.ndjson" 2>"$work/watch-test.err" &
named_watch_pid=$!
pids+=("$named_watch_pid")
for _ in $(seq 50); do [ -s "$work/watch-test.err" ] && break; sleep 0.1; done
grep -q "no session 'test' yet; waiting up to 30 s for it to start" "$work/watch-test.err" ||
  fail "watch before the session: $(cat "$work/watch-test.err")"
expect_status 0 "start" "$ctl" start test -s 10
expect_status 2 "start a clashing name" "$ctl" start test -s 10
grep -q "already exists" "$work/err" || fail "clashing name: message"
for _ in $(seq 50); do grep -q sent "$work/host.log" && grep -q sent "$work/target.log" && break; sleep 0.2; done
wait "$watch_pid" || fail "watch -o ndjson --count 5: exit $? ($(cat "$work/watch.err"))"
"$(dirname "$0")/check_watch_ndjson.py" <"$work/watch.ndjson" ||
  fail "watch -o ndjson: field types (output: $(head -c 600 "$work/watch.ndjson"))"
"$ctl" watch --help | grep -q "p99_ns  *integer" || fail "watch --help: no ndjson field types"
expect_status 0 "status" "$ctl" status test
grep -q "host1 .*host .*connected .*100 records" "$work/out" || fail "status: $(cat "$work/out")"

# Both agents are busy with test: they refuse a second session, and start must say so.
expect_status 1 "start while the agents record another session" "$ctl" start second -s 10
grep -q "2 of 2 agent(s) refused session 'second' (so it is stopped): host1: already recording session test" \
  "$work/err" || fail "start refused: message: $(cat "$work/err")"
grep -q "target1: already recording session test" "$work/err" || fail "start refused: target1"
expect_status 0 "status of the refused session" "$ctl" status second
grep -q "session second: stopped" "$work/out" || fail "refused session not stopped: $(cat "$work/out")"
grep -q "target1 .*target .*connected .*refused: already recording session test" "$work/out" ||
  fail "status: no refusal: $(cat "$work/out")"

expect_status 2 "watch an unknown session" "$ctl" watch no-such-session --count 1 --wait 0
grep -q "no session named 'no-such-session'" "$work/err" || fail "watch unknown: $(cat "$work/err")"
[ -s "$work/out" ] && fail "watch unknown session printed intervals: $(head -3 "$work/out")"
SECONDS=0
expect_status 2 "watch a session that does not start" "$ctl" watch no-such-session --wait 1
grep -q "session 'no-such-session' did not start within 1 s" "$work/err" ||
  fail "watch --wait 1: $(cat "$work/err")"
[ "$SECONDS" -le 3 ] || fail "watch --wait 1 took $SECONDS s"
expect_status 2 "watch a stopped session" "$ctl" watch second --count 1
grep -q "session 'second' is stopped" "$work/err" || fail "watch stopped: $(cat "$work/err")"

expect_status 0 "stop" "$ctl" stop test
grep -q "already stopped" "$work/err" && fail "stop of a running session says already stopped"
for _ in $(seq 50); do kill -0 "$named_watch_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$named_watch_pid" 2>/dev/null; then
  fail "watch test still runs 5 s after the session stopped"
else
  wait "$named_watch_pid" || fail "watch test ended with exit $?: $(cat "$work/watch-test.err")"
  grep -q "ntprofctl watch: session 'test' ended; \`ntprofctl report test\` shows what it recorded" \
    "$work/watch-test.err" || fail "watch test's end: $(cat "$work/watch-test.err")"
  # (Its first commands may come before the watch asks again: it asks every 0.2 s.)
  [ -s "$work/watch-test.ndjson" ] || fail "watch test printed no interval"
fi
expect_status 0 "stop again" "$ctl" stop test
grep -q "ntprofctl stop: session 'test' was already stopped; nothing changed" "$work/err" ||
  fail "stop again: message: $(cat "$work/err")"
expect_status 2 "stop an unknown session" "$ctl" stop no-such-session

"$ctl" report "$work/rec/base/host.ntp" "$work/rec/base/target.ntp" --detail >"$work/file.txt"
expect_status 0 "report SESSION" "$ctl" report test --detail
diff "$work/file.txt" "$work/out" >/dev/null || fail "session report differs from the file report: $(diff "$work/file.txt" "$work/out" | head)"
expect_status 0 "report SESSION -o json" "$ctl" report test -o json
grep -q '"source": "session test"' "$work/out" || fail "report json: source"
# --slowest and --html of a session: the collector builds them from the same records as the files.
"$ctl" report "$work/rec/base" --slowest 3 -o json >"$work/file-slowest.json"
expect_status 0 "report SESSION --slowest 3 -o json" "$ctl" report test --slowest 3 -o json
python3 - "$work/file-slowest.json" "$work/out" <<'PY' || fail "session --slowest differs from the file's"
import json, sys
files, session = (json.load(open(p))["slowest"] for p in sys.argv[1:])
assert len(session) == 3, session
for f, s in zip(files, session):
    assert (s["host"], s["target"]) == ("host1", "target1"), s
    for k in ("latency_us", "stages", "qid", "cid", "slba", "bytes", "op"):
        assert f[k] == s[k], (k, f[k], s[k])
PY
expect_status 0 "report SESSION --slowest 2" "$ctl" report test --slowest 2
grep -q "^slowest 2 of 100 sampled commands" "$work/out" || fail "report --slowest: $(head -c 300 "$work/out")"
expect_status 0 "report SESSION --html" "$ctl" report test --detail --slowest 2 --html "$work/session.html"
grep -q "^<!DOCTYPE html>" "$work/session.html" && grep -q "Slowest commands" "$work/session.html" &&
  grep -q "session test" "$work/session.html" || fail "report --html of a session: no page"
[ -s "$work/out" ] && fail "report --html printed on stdout: $(head -c 200 "$work/out")"
expect_status 0 "compare SESSION SESSION --html" "$ctl" compare test test --html "$work/compare.html"
grep -q "no stage grew" "$work/compare.html" || fail "compare --html of sessions: no verdict"
expect_status 0 "compare SESSION FILES --html" "$ctl" compare test "$work/rec/slow" --html "$work/mixed.html"
grep -q "grew most: storage" "$work/mixed.html" || fail "compare --html session vs files: no verdict"

expect_status 0 "export to a directory" "$ctl" export test -o "$work/exported"
[ -f "$work/exported/host1-host.ntp" ] && [ -f "$work/exported/target1-target.ntp" ] || fail "export: files"
"$ctl" report "$work/exported" --detail >"$work/exported.txt"
diff "$work/file.txt" "$work/exported.txt" >/dev/null || fail "report of the export differs"
expect_status 2 "export two agents to one file" "$ctl" export test -o "$work/one.ntp"
grep -q "give a directory" "$work/err" || fail "export to one file: message"

expect_status 0 "compare SESSION FILES" "$ctl" compare test "$work/rec/slow"
grep -q "storage" "$work/out" || fail "compare: no storage line"
expect_status 0 "compare SESSION SESSION" "$ctl" compare test test

expect_status 2 "report unknown session" "$ctl" report nosuch
expect_status 0 "watch --count" "$ctl" watch --count 1 -o ndjson
grep -q '"interval_s"' "$work/out" || fail "watch ndjson: $(cat "$work/out")"
expect_status 2 "unknown flag" "$ctl" watch --bogus
for salt in 18446744073709551616 -5; do
  expect_status 2 "start --salt $salt" "$ctl" start salty -s 10 --salt "$salt"
  grep -q -- "--salt: $salt is not a whole number from 0 to 18446744073709551615" "$work/err" ||
    fail "start --salt $salt: message: $(tail -1 "$work/err")"
done
expect_status 2 "start -d -1" "$ctl" start salty -s 10 -d -1
grep -q -- "--duration: -1 is not a whole number" "$work/err" || fail "start -d -1: $(tail -1 "$work/err")"
expect_status 1 "collector not reachable" "$ctl" status --collector "unix:$work/none.sock"
[ "$(wc -l <"$work/err")" = 1 ] || fail "unreachable: more than one line"
grep -q "cannot reach the collector at unix:$work/none.sock" "$work/err" || fail "unreachable: message"
expect_status 1 "agent not reachable" "$ctl" probe "unix:$work/none.sock"
for verb in start stop status watch report compare export probe; do
  # Into a file first: grep -q would close the pipe at its match and fail the writer under pipefail.
  "$ctl" "$verb" --help >"$work/help" || fail "$verb --help: exit $?"
  grep -q "Examples:" "$work/help" || fail "$verb --help has no examples"
done

[ "$failures" = 0 ] && echo "all ntprofctl collector checks passed"
exit "$failures"
