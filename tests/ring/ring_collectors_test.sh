#!/bin/bash
# Several collectors (issue 17): real ntprof-collector processes sharing a fleet's subsystems on a
# consistent-hash ring, and ring_fleet's 8 hosts x 4 targets x 16 subsystems streaming through
# ntprofd's own CollectorRing (spool and link per collector). SCENARIO:
#   union  two collectors: the session's report asked of either one = the file report of every
#          record the agents sent (groups, records, losses), so is the report of an export from
#          the other one, status lists the whole fleet, and a watch of collector 1 counts every
#          command the agents sent, collector 2's share included, each once
#   kill   the same while one collector is killed with -9 mid-session and restarted: every
#          record once (no loss, no duplicate), the report still the file report; the watch of
#          collector 1 goes on, each interval without collector 2 naming it
#   grow   a third collector joins the ring mid-session (ring file and peers files change):
#          nothing lost, and the new collector holds only subsystems it owns on the new ring
# usage: ring_collectors_test.sh NTPROFCTL NTPROF_COLLECTOR RING_FLEET union|kill|grow
set -u
ctl=$1 collector=$2 fleet=$3 scenario=$4
work=$(mktemp -d /tmp/ntprof-ring.XXXXXX)
declare -A cpid
fleet_pid=
watch_pid=
session_watch_pid=
cleanup() {
  [ -n "$fleet_pid" ] && kill -9 "$fleet_pid" 2>/dev/null
  [ -n "$watch_pid" ] && kill -9 "$watch_pid" 2>/dev/null
  [ -n "$session_watch_pid" ] && kill -9 "$session_watch_pid" 2>/dev/null
  for p in "${cpid[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${NTPROF_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.log; do echo "--- $f"; tail -15 "$f"; done
  exit 1
}
addr() { echo "unix:$work/c$1.sock"; }
ctl_at() { local n=$1; shift; NTPROF_COLLECTOR=$(addr "$n") "$ctl" "$@"; }  # ntprofctl asking collector N
members() {  # N...: the ring file and every collector's peers file
  : >"$work/ring"
  for i in "$@"; do addr "$i" >>"$work/ring"; done
  for i in "$@"; do grep -v "^$(addr "$i")\$" "$work/ring" >"$work/peers$i"; done
}
start_collector() {  # N: collector 2 joins on 2 threads (its subsystems divided among them)
  local threads=1
  [ "$1" = 2 ] && threads=2
  "$collector" --listen "$(addr "$1")" --data-dir "$work/data$1" --metrics-listen "" \
      --peers-file "$work/peers$1" --join-threads $threads >>"$work/c$1.log" 2>&1 &
  cpid[$1]=$!
  for _ in $(seq 100); do
    ctl_at $1 status >/dev/null 2>&1 && return
    sleep 0.1
  done
  fail "collector $1 did not come up"
}
wait_for() {  # seconds, description, command...
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out: $what"
    sleep 0.2
  done
}
streams_at() {  # N, count: collector N's status lists COUNT agent streams (the whole ring's)
  [ "$(ctl_at $1 status 2>/dev/null | grep -c 'acked seq')" -ge "$2" ]
}
fleet_says() { grep -q "$1" "$work/fleet.log"; }
# The parts of a JSON report that are about the records (not titles, notes or sources).
same_report() {  # collector N: its report of the session = the file report of what was sent
  ctl_at $1 report ring -o json >"$work/report$1.json" ||
    fail "report from collector $1"
  python3 - "$work/files.json" "$work/report$1.json" <<'PY' || fail "collector $1's report differs from the file report"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("groups", "records", "losses", "sample_rate", "transport"):
    if a[key] != b[key]:
        print(f"{key}:\n files:   {json.dumps(a[key])[:600]}\n session: {json.dumps(b[key])[:600]}")
        sys.exit(1)
r = a["records"]
print(f"  records {r['host']} host, {r['target']} target, {r['matched']} matched (file report)")
PY
}

agents=12   # 8 hosts + 4 targets
seconds=8
members 1 2
start_collector 1
start_collector 2
"$fleet" stream "$work/ring" "$work/spool" "$work/out" ring "$seconds" >"$work/fleet.log" 2>&1 &
fleet_pid=$!
wait_for 20 "every agent connects to both collectors" streams_at 1 $((2 * agents))
# A watch of collector 1 over every running session, open before the session starts so that it
# sees every command: each interval merges collector 2's.
if [ "$scenario" != grow ]; then
  NTPROF_COLLECTOR="$(addr 1)" "$ctl" watch -o ndjson >"$work/watch.out" 2>"$work/watch.err" &
  watch_pid=$!
  wait_for 15 "the watch prints its first interval" test -s "$work/watch.out"
  python3 -c "import json,sys; n=json.loads(open(sys.argv[1]).readline())['notes']; sys.exit(len(n))" \
      "$work/watch.out" || fail "the watch's first interval misses a collector: $(head -1 "$work/watch.out")"
fi
# A watch of session ring alone, also from before the start: it waits for the session and ends
# with it, once every collector's last interval is merged.
NTPROF_COLLECTOR="$(addr 1)" "$ctl" watch ring -o ndjson >"$work/session-watch.out" \
  2>"$work/session-watch.err" &
session_watch_pid=$!
ctl_at 1 start ring -s 1 >"$work/start.log" 2>&1 || fail "start: $(cat "$work/start.log")"
wait_for 20 "the agents record" fleet_says recording
echo "ok:   session ring started through collector 1 reaches every agent on both collectors"

case $scenario in
  union) ;;
  kill)
    sleep 2
    kill -9 "${cpid[2]}"; wait "${cpid[2]}" 2>/dev/null
    echo "      collector 2 killed (-9) mid-session"
    sleep 1.5
    start_collector 2
    echo "      collector 2 restarted"
    ;;
  grow)
    sleep 2
    members 1 2 3
    start_collector 3
    wait_for 20 "the agents connect to collector 3" streams_at 3 $((3 * agents))
    echo "ok:   collector 3 joined the ring mid-session"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac

wait_for 60 "every collector acks every message" fleet_says "^sent "
sent=$(sed -n 's/^sent //p' "$work/fleet.log")
if [ -n "$watch_pid" ]; then
  sleep 3.5  # the last commands' interval, and the wait for collector 2's part of it
  kill "$watch_pid"; wait "$watch_pid" 2>/dev/null; watch_pid=
  # Joined commands per interval, summed; which intervals name collector 2 as missing.
  read -r watched intervals missing after < <(python3 - "$work/watch.out" "$(addr 2)" <<'PY'
import json, sys
watched = intervals = missing = after = 0
for line in open(sys.argv[1]):
    u = json.loads(line)
    intervals += 1
    watched += sum(g["sampled"] for g in u["groups"] if g["scope"] == "joined")
    if any(sys.argv[2] in n for n in u["notes"]):
        missing += 1
        after = 0
    else:
        after += 1
print(watched, intervals, missing, after)
PY
)
  echo "      watch of collector 1: $intervals intervals, $watched joined commands; $missing intervals name collector 2 as missing"
  grep -q "cover only" "$work/watch.err" && fail "the watch still says it covers one collector"
  if [ "$scenario" = union ]; then
    [ "$watched" = $((sent / 2)) ] ||
      fail "the watch of collector 1 counted $watched joined commands, the agents sent $((sent / 2))"
    # (An interval whose collector-2 part came late says so; the part goes into the next one.)
    grep -q '"notes":\[[^]]*down' "$work/watch.out" && fail "the watch found collector 2 down"
    echo "ok:   the watch of collector 1 counted all $watched commands of the ring, collector 2's included, each once"
  else
    [ "$missing" -gt 0 ] || fail "no interval of the watch names collector 2 while it was down"
    [ "$after" -gt 0 ] || fail "the watch did not merge collector 2 again after its restart"
    grep -m1 "$(addr 2)" "$work/watch.out" | python3 -c "
import json, sys; print('      note:', [n for n in json.loads(sys.stdin.read())['notes']][0])"
    echo "ok:   the watch of collector 1 went on while collector 2 was down, naming it, and merged it again after its restart ($after intervals)"
  fi
fi
ctl_at 1 stop ring >/dev/null || fail "stop"
session_watch_ended() { ! kill -0 "$session_watch_pid" 2>/dev/null; }
wait_for 5 "the watch of session ring ends with it" session_watch_ended
wait "$session_watch_pid" || fail "the watch of session ring exited $?: $(cat "$work/session-watch.err")"
session_watch_pid=
grep -q "session 'ring' ended" "$work/session-watch.err" ||
  fail "the watch of session ring did not say it ended: $(cat "$work/session-watch.err")"
echo "ok:   the watch of session ring (asked of collector 1) ended with the session: $(grep -c . "$work/session-watch.out") intervals"
"$ctl" report "$work/out/" -o json >"$work/files.json" || fail "file report"
read -r host target matched < <(python3 -c "
import json; r = json.load(open('$work/files.json'))['records']; print(r['host'], r['target'], r['matched'])")
[ $((host + target)) = "$sent" ] || fail "the file report has $host + $target records, the agents sent $sent"
[ "$host" = "$matched" ] || fail "the file report matched $matched of $host"
same_report 1
same_report 2
[ "$scenario" = grow ] && same_report 3
echo "ok:   the session's report from each collector = the file report of the $sent records sent"
ctl_at 2 export ring -o "$work/export/" >/dev/null || fail "export from collector 2"
"$ctl" report "$work/export/" -o json >"$work/export.json" || fail "report of the export"
python3 -c "
import json, sys
a, b = (json.load(open(p)) for p in ('$work/files.json', '$work/export.json'))
sys.exit(any(a[k] != b[k] for k in ('groups', 'records', 'losses')))" ||
  fail "the report of collector 2's export differs from the file report"
echo "ok:   export from collector 2 holds the whole ring's files ($(ls "$work/export" | wc -l) files)"

# Every record exactly once across the ring: the collectors' own files, counted by identity.
total=0
for d in "$work"/data*/sessions/ring; do
  n=$("$ctl" report "$d/" -o json 2>/dev/null | python3 -c "
import json, sys; r = json.load(sys.stdin)['records']; print(r['host'] + r['target'])")
  echo "      $(basename "$(dirname "$(dirname "$d")")"): ${n:-0} records"
  total=$((total + ${n:-0}))
done
[ "$total" = "$sent" ] || fail "the collectors hold $total records, the agents sent $sent"
echo "ok:   the collectors hold $total records together: each once"

if [ "$scenario" = grow ]; then
  ring3=$(paste -sd, "$work/ring")
  out=$("$fleet" owners "$ring3" "$(addr 3)" "$work"/data3/sessions/ring/*.ntp) ||
    fail "collector 3 holds records it does not own: $out"
  echo "ok:   collector 3 holds only its own subsystems ($out)"
  n3=$(echo "$out" | awk '{print $4}')
  [ "${n3:-0}" -gt 0 ] || fail "collector 3 got no subsystem"
  [ "$n3" -lt 40 ] || fail "collector 3 got $n3 of 64 subsystems: more than its share"
fi
# Status asked of any collector lists every collector's agent streams.
n=$(ctl_at 2 status | grep -c 'acked seq')
[ "$n" = $((agents * $([ "$scenario" = grow ] && echo 3 || echo 2))) ] ||
  fail "status at collector 2 lists $n agent streams"
echo "ok:   status at collector 2 lists the $n agent streams of the whole ring"
headline=$(ctl_at 2 status | head -1)
[[ $headline == *": $agents agent(s) connected ($n streams"* ]] ||
  fail "status at collector 2 does not count the $agents agents once: $headline"
echo "ok:   status counts the $agents agents once: $headline"
echo "all ring scenarios ($scenario) passed"
