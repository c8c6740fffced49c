#!/bin/bash
# `ntprofd serve` end to end on this machine: a real ntprof-collector, a real agent recording a
# loop device (--transport local, block-layer hooks), sessions driven by ntprofctl. Ground truth is
# the block layer's own count of completed I/Os (/sys/block/loopN/stat), 1 in 1 sampled:
#   1. a session's report counts exactly the I/Os done while it ran; two sessions at once (1 in 1000
#      for one device, 1 in 10) each hold exactly the commands their own rate and filter pick from
#      the I/Os done (sampling recomputed here, in Python, from the LBAs written and read);
#   2. the collector killed -9 mid-session and restarted: every record once (no loss, no duplicate);
#   3. the agent killed -9 mid-session and restarted: it rejoins, records again, and the session's
#      notes declare the interval it lost;
#   4. a spool too small for an outage drops its oldest batches and declares them ("spool full");
#   5. the socket is mode 0660 (group ntprof when it exists) and a second agent is refused;
#      Agent.Status tells the link, the spool and the losses;
#   6. a new collector (data directory lost): the agent declares what the old one had acked;
#   7. the collector's standing session: every setting intact through a collector kill -9 and an
#      agent kill -9, recording after each, followed by `ntprofctl watch` with no name.
# Needs root, BPF with BTF and losetup: exits 77 (skipped) otherwise.
#   ntprofd_serve_test.sh NTPROFD NTPROF_COLLECTOR NTPROFCTL AGENT_STATUS_QUERY NTP_COMMANDS
set -uo pipefail
ntprofd=$1 collector=$2 ctl=$3 status_query=$4 ntp_commands=$5
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (BPF programs, loop devices)"; exit 77; }
[ -e /sys/kernel/btf/vmlinux ] || { echo "SKIPPED: kernel has no BTF"; exit 77; }
command -v losetup >/dev/null || { echo "SKIPPED: no losetup"; exit 77; }

work=$(mktemp -d /tmp/ntprofd-serve.XXXXXX)
. "$(dirname "$0")/agent_test_lib.sh"

make_loop_device

csock="unix:$work/collector.sock"
asock="$work/run/ntprofd.sock"
export NTPROF_COLLECTOR=$csock

start_collector() {  # extra flags...
  "$collector" --listen "$csock" --data-dir "$work/data" --metrics-listen "" --log-level debug \
      "$@" >>"$work/collector.log" 2>&1 &
  collector_pid=$!
  for _ in $(seq 50); do "$ctl" status >/dev/null 2>&1 && return; sleep 0.1; done
  fail "collector did not come up"
}
start_agent() {  # log file, extra flags...
  agent_log=$1; shift
  "$ntprofd" serve --role host --transport local --device "$dev" --agent-name agent1 \
      --collector "$csock" --socket "$asock" --spool-dir "$work/spool" "$@" >>"$agent_log" 2>&1 &
  agent_pid=$!
}
connected() { "$ctl" status | grep -q "agent1 .*host .*from"; }
recording() { grep -q "session $1: recording" "$agent_log"; }
# Completed reads + writes of the loop device (fields 1 and 5 of its stat). udev reads a device
# after a writer closes it (blkid): let that finish first, or an I/O issued before the recording
# attached could complete inside the count.
ios() {
  command -v udevadm >/dev/null && udevadm settle --timeout=5 2>/dev/null
  awk '{print $1 + $5}' "/sys/block/$dev/stat"
}
do_io() {  # reads, writes, first block (of 16384): O_DIRECT, 4 KiB, distinct blocks, nothing merged or cached
  dd if="$loop" of=/dev/null bs=4k count="$1" skip="${3:-0}" iflag=direct status=none
  dd if=/dev/zero of="$loop" bs=4k count="$2" seek="$((${3:-0} + 1000))" oflag=direct status=none
}
reported() {  # session -> host records in its report
  "$ctl" report "$1" | sed -n 's/^records: \([0-9]*\) host.*/\1/p'
}
# Sampled commands the agent counted instead of recording: the kernel skipped their completion
# hook (found when the request was reused) or they were still in flight at the stop.
counted_lost() {  # session -> completion_missed + unfinished_at_stop of its report
  "$ctl" report "$1" -o json |
    python3 -c 'import json,sys; l=json.load(sys.stdin)["losses"]; print(l.get("completion_missed",0) + l.get("unfinished_at_stop",0))'
}
settled() {  # the agent's spool is empty: every message of the session is acked
  "$ctl" status | grep -q "agent1 .*acked seq" && ! ls "$work"/spool/*.recording >/dev/null 2>&1
}
begin_session() {  # name: started, and the agent's programs attached
  "$ctl" start "$1" -s 1 >/dev/null || fail "start $1"
  wait_for 20 "session $1 to record" recording "$1"
}
end_session() {  # name: stopped, acked; sets got (records in its report) and lost (counted instead)
  "$ctl" stop "$1" >/dev/null || fail "stop $1"
  wait_for 10 "session $1 to settle" settled
  got=$(reported "$1")
  lost=$(counted_lost "$1")
}
# Every I/O done is either a record or a counted loss, exactly: none missing, none twice.
counts_match() {  # label, reported, counted lost, done
  [ "$(( $2 + $3 ))" = "$4" ] || return 1
  [ "$3" = 0 ] || echo "  $1: $3 I/O(s) counted as lost by the agent (see the report's 'lost:' line)"
}
counted_session() {  # name, label, reads, writes, first block: its report counts every I/O once
  begin_session "$1" || exit 1
  local before; before=$(ios)
  do_io "$3" "$4" "$5"
  sleep 0.3
  local done_ios=$(( $(ios) - before ))
  end_session "$1"
  echo "session $1$2: $done_ios I/Os done, $got records reported"
  counts_match "session $1" "$got" "$lost" "$done_ios" ||
    fail "session $1: $got records reported + $lost counted lost, $done_ios I/Os done"
}

start_collector
start_agent "$work/agent.log"
wait_for 20 "the agent to connect" connected || exit 1

agent_status() { "$status_query" "unix:$asock"; }
# A field of Agent.Status (proto text; absent = 0 / false).
status_field() { agent_status | sed -n "s/^ *$1: //p" | head -1; }

# ---- 5. the socket ------------------------------------------------------------------------------
mode=$(stat -c %a "$asock")
[ "$mode" = 660 ] || fail "socket mode $mode, wanted 660"
if getent group ntprof >/dev/null; then
  [ "$(stat -c %G "$asock")" = ntprof ] || fail "socket group $(stat -c %G "$asock"), wanted ntprof"
fi
"$ntprofd" serve --role host --transport local --device "$dev" --socket "$asock" \
    --spool-dir "$work/spool2" --no-collector >"$work/second.log" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "a second agent on the same socket: exit $rc, wanted 1"
grep -q "another ntprofd already serves on $asock" "$work/second.log" ||
  fail "second agent: message: $(cat "$work/second.log")"
"$ctl" probe "unix:$asock" >"$work/probe.txt" 2>&1 || fail "ntprofctl probe of the agent failed"
grep -q "block_rq" "$work/probe.txt" || fail "probe shows no block hooks: $(head -3 "$work/probe.txt")"

# ---- 1. one session, counted against the block layer -------------------------------------------
counted_session one "" 600 400 0
# The journal names who ended the recording: `ntprofctl stop` went through the collector.
grep -q "session one: stopped by the collector, [0-9]* records" "$agent_log" ||
  fail "the agent's log does not say the collector stopped session one: $(grep 'session one:' "$agent_log")"
[ "$(status_field collector_connected)" = true ] || fail "Status: not connected: $(agent_status)"
[ -z "$(status_field spool_batches)" ] || fail "Status: spool not empty after the acks: $(agent_status)"
[ -n "$(status_field last_acked_seq)" ] || fail "Status: no last_acked_seq: $(agent_status)"

# ---- 1b. a session for one subsystem: a loop device belongs to none, so nothing is kept ----------
"$ctl" start filtered -s 1 --subsystems nqn.2024-01.io.ntprof:none >/dev/null || fail "start filtered"
wait_for 20 "session filtered to record" recording filtered || exit 1
before=$(ios)
do_io 100 100 6000
sleep 0.3
done_ios=$(( $(ios) - before ))
end_session filtered
echo "session filtered (--subsystems of another subsystem): $done_ios I/Os done, ${got:-0} records reported"
[ "$done_ios" -gt 0 ] && [ "${got:-0}" = 0 ] || fail "session filtered: ${got:-0} records kept, wanted 0"

# ---- 1c. two sessions at once on the agent: each gets what it would have recorded alone ---------
# coarse: 1 in 1000 of this device; fine: 1 in 10 of everything, started while coarse records (the
# BPF side goes from 1 in 1000 to 1 in 10) and stopped before it (back to 1 in 1000).
"$ctl" start coarse -s 1000 --devices "$dev" >/dev/null || fail "start coarse"
wait_for 20 "session coarse to record" recording coarse || exit 1
coarse_before=$(ios)
"$ctl" start fine --sample-rate 10 >/dev/null || fail "start fine beside coarse"
wait_for 20 "session fine to record beside coarse" recording fine || exit 1
"$ctl" status | grep -q "session coarse: running" || fail "coarse stopped when fine started"
fine_before=$(ios)
do_io 12000 6000 0
sleep 0.3
fine_done=$(( $(ios) - fine_before ))
"$ctl" stop fine >/dev/null || fail "stop fine"
# The agent keeps, for fine, the commands that started before it got the stop.
wait_for 10 "the agent to stop fine" grep -q "session fine: stopped" "$agent_log"
do_io 2000 0 12000   # coarse alone again
sleep 0.3
coarse_done=$(( $(ios) - coarse_before ))
"$ctl" stop coarse >/dev/null || fail "stop coarse"
wait_for 10 "sessions fine and coarse to settle" settled
[ "$fine_done" = 18000 ] && [ "$coarse_done" = 20000 ] ||
  fail "I/O besides the test's own during fine/coarse: $fine_done and $coarse_done done, wanted 18000 and 20000"
salt=$("$ctl" status fine | sed -n 's/^session fine: .*salt \([0-9]*\).*/\1/p')
[ -n "$salt" ] && "$ctl" status coarse | grep -q "salt $salt" ||
  fail "fine and coarse do not share the fleet's salt: $("$ctl" status 2>&1)"
for s in fine coarse; do
  mkdir -p "$work/export-$s"
  "$ctl" export "$s" -o "$work/export-$s/" >/dev/null || fail "export $s"
  "$ntp_commands" "$work/export-$s"/*.ntp >"$work/$s.commands" || fail "ntp_commands $s"
done
# The sampler of bpf/ntprof_sampler.h written again: the local block hooks hash (opcode, nsid 0,
# sector, cid 0); a command is kept at 1 in N when its hash <= (2^64 - 1) / N.
python3 - "$salt" "$work/fine.commands" "$work/coarse.commands" "$(counted_lost fine)" \
    "$(counted_lost coarse)" <<'PY' || fail "sessions fine and coarse"
import collections, sys
M = (1 << 64) - 1
def mix(x):
    x ^= x >> 30; x = (x * 0xbf58476d1ce4e5b9) & M
    x ^= x >> 27; x = (x * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
def kept(opcode, slba, nlb, salt, n):  # nlb and slba's high dword are not hashed
    word = (slba & 0xffffffff) ^ ((opcode << 16) << 40)  # nsid 0, cid 0
    return mix(mix(salt ^ 0x6e7470726f66) ^ word) <= M // n
salt = int(sys.argv[1])
def issued(reads, writes, first):  # do_io: 4 KiB = 8 sectors, nlb 7; reads then writes
    return [(2, (first + i) * 8) for i in range(reads)] + \
           [(1, (first + 1000 + i) * 8) for i in range(writes)]
with_fine = issued(12000, 6000, 0)
alone = issued(2000, 0, 12000)
want = {"fine": collections.Counter(c for c in with_fine if kept(*c, 7, salt, 10)),
        "coarse": collections.Counter(c for c in with_fine + alone if kept(*c, 7, salt, 1000))}
ok = True
# A sampled command the agent counted as lost (its completion hook skipped by the kernel, about
# 1 in 100,000) is missing from the records: allowed exactly as many times as the report counts.
for name, path, lost in (("fine", sys.argv[2], int(sys.argv[4])),
                         ("coarse", sys.argv[3], int(sys.argv[5]))):
    got = collections.Counter()
    for line in open(path):
        op, slba, nlb = map(int, line.split())
        got[(op, slba)] += 1
    missing, extra = want[name] - got, got - want[name]
    print(f"session {name}: {sum(got.values())} records, {sum(want[name].values())} expected "
          f"from the I/O done; missing {sum(missing.values())} (counted lost {lost}), "
          f"extra {sum(extra.values())}")
    ok = ok and sum(missing.values()) == lost and not extra
# Nested: every command coarse kept while fine ran is one fine kept too.
ok = ok and not (collections.Counter(c for c in with_fine if kept(*c, 7, salt, 1000)) - want["fine"])
sys.exit(0 if ok and sum(want["coarse"].values()) > 0 else 1)
PY

# ---- 2. the collector killed mid-session ---------------------------------------------------------
begin_session two || exit 1
before=$(ios)
do_io 300 200 2000
sleep 1.5  # one interval: these records are acked before the kill
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
do_io 300 200 4000  # the agent keeps recording into its spool
sleep 1.5
spooled=$(status_field spool_batches)
[ -z "$(status_field collector_connected)" ] || fail "Status: connected to a dead collector"
[ "${spooled:-0}" -gt 0 ] || fail "Status: nothing spooled while the collector was down: $(agent_status)"
start_collector
wait_for 20 "the agent to reconnect" connected
do_io 300 200 6000
sleep 0.3
done_ios=$(( $(ios) - before ))
end_session two
dups=$("$ctl" status | sed -n 's/.*agent1 .* \([0-9]*\) duplicates.*/\1/p')
echo "session two (collector killed): $done_ios I/Os done, $got records reported, ${spooled:-0} message(s) spooled during the outage, $dups duplicate message(s) discarded"
counts_match "session two" "$got" "$lost" "$done_ios" ||
  fail "session two: $got records reported + $lost counted lost, $done_ios I/Os done"

# ---- 3. the agent killed mid-session -------------------------------------------------------------
begin_session three || exit 1
before=$(ios)
do_io 300 200 8000
sleep 1.5  # flushed and spooled: survives the kill
first=$(( $(ios) - before ))
kill -9 "$agent_pid"; wait "$agent_pid" 2>/dev/null
do_io 100 100 10000  # nobody records these
start_agent "$work/agent-restarted.log"
wait_for 20 "the restarted agent to record again" recording three
before=$(ios)
do_io 300 200 12000
sleep 0.3
second=$(( $(ios) - before ))
end_session three
"$ctl" report three >"$work/three.txt"
echo "session three (agent killed): $first + $second I/Os recorded by the agent's two runs, $got records reported"
counts_match "session three" "$got" "$lost" $((first + second)) ||
  fail "session three: $got records reported + $lost counted lost, wanted $first + $second"
grep -q "agent1 lost batches .*agent restarted while recording session three" "$work/three.txt" ||
  fail "session three: the report has no note of the agent's restart: $(grep note "$work/three.txt")"
grep note "$work/three.txt" | sed 's/^/  /'

# ---- 4. a spool too small for the outage ------------------------------------------------------------
kill -TERM "$agent_pid"; wait "$agent_pid"
start_agent "$work/agent-small-spool.log" --spool-max-bytes 1048576
wait_for 20 "the agent to reconnect" connected
begin_session four || exit 1
before=$(ios)
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
for _ in 1 2 3; do dd if="$loop" of=/dev/null bs=4k iflag=direct status=none; done  # 3 x 16384
sleep 1.5
start_collector
wait_for 20 "the agent to reconnect" connected
sleep 0.3
done_ios=$(( $(ios) - before ))
end_session four
spool_lost=$(status_field spool_full)
"$ctl" report four >"$work/four.txt"
echo "session four (spool full): $done_ios I/Os done, $got records reported, ${spool_lost:-0} dropped as spool full, $lost counted lost in the kernel"
[ "${spool_lost:-0}" -gt 0 ] || fail "session four: the spool did not overflow: $(agent_status)"
[ "${got:-0}" -gt 0 ] || fail "session four: the spool kept nothing"
# Every I/O is either reported or declared lost, exactly.
[ $((got + ${spool_lost:-0} + lost)) = "$done_ios" ] ||
  fail "session four: $got reported + ${spool_lost:-0} spool full + $lost kernel vs $done_ios I/Os done"
grep -q "lost: .*spool full" "$work/four.txt" || fail "session four: the report does not say spool full"
"$ctl" status four | grep -q "agent1 lost batches .*(spool full)" || fail "session four: no gap note"
grep -q "agent1 lost batches .*(spool full)" "$work/four.txt" || fail "session four: no gap note in the report"
grep -E "lost: |note" "$work/four.txt" | sed 's/^/  /'

# ---- 6. a new collector (its data directory lost) ------------------------------------------------
# It holds none of the numbers the old one acked: the agent declares them, and its acks move on.
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
rm -rf "$work/data"
start_collector
wait_for 20 "the agent to reconnect" connected
counted_session five " (new collector)" 300 200 14000
"$ctl" status | grep -q "agent1 .*acked seq [1-9]" || fail "new collector: acks do not move: $("$ctl" status | head -3)"
grep -q "acked before: declaring them" "$agent_log" || fail "new collector: the agent declared nothing"

# ---- 7. the standing session --------------------------------------------------------------------
standing=(--standing-session fleet --standing-sample-rate 7 --standing-devices "$dev")
standing_line() { "$ctl" status fleet | grep "^session fleet:"; }
standing_records() { "$ctl" status fleet | sed -n 's/^ *agent1 .* \([0-9]*\) records in .*/\1/p'; }
more_than() { [ "$(standing_records)" -gt "$1" ]; }
records_grow() {  # records before: the standing session records the I/O done now
  do_io 700 0 15000
  wait_for 10 "the standing session to store new records" more_than "$1"
}
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
start_collector "${standing[@]}"
wait_for 20 "the agent to reconnect" connected
wait_for 20 "the standing session to record" recording fleet || exit 1
first=$(standing_line)
echo "standing: $first"
echo "$first" | grep -q "^session fleet: running, 1 in 7, salt [0-9]*, devices $dev (the standing session)$" ||
  fail "standing session: $first"
records_grow 0
do_io 700 0 15000 &
pids+=($!)
"$ctl" watch --count 3 >"$work/watch-standing.txt" 2>&1 || fail "watch with no name: $(cat "$work/watch-standing.txt")"
grep -q "fleet.*$dev\|$dev.*sampled" "$work/watch-standing.txt" ||
  fail "watch with no name does not follow the standing session: $(cat "$work/watch-standing.txt")"
"$ctl" stop fleet >/dev/null 2>"$work/stop-fleet.err" && fail "stop of the standing session succeeded"
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
start_collector "${standing[@]}"
wait_for 20 "the agent to reconnect after the collector's kill -9" connected
[ "$(standing_line)" = "$first" ] || fail "standing session after a collector kill -9: $(standing_line)"
records_grow "$(standing_records)"
kill -9 "$agent_pid"; wait "$agent_pid" 2>/dev/null
start_agent "$work/agent-standing.log"
wait_for 20 "the restarted agent to connect" connected
wait_for 20 "the restarted agent to record the standing session" recording fleet
[ "$(standing_line)" = "$first" ] || fail "standing session after an agent kill -9: $(standing_line)"
records_grow "$(standing_records)"
echo "standing: kept through a collector kill -9 and an agent kill -9, $(standing_records) records"

# ---- a clean stop ----------------------------------------------------------------------------------
kill -TERM "$agent_pid"; wait "$agent_pid"
rc=$?; agent_pid=""
[ "$rc" = 0 ] || fail "ntprofd serve exit $rc after SIGTERM"
[ -e "$asock" ] && fail "socket left behind after a clean stop"

[ "$failures" = 0 ] && echo "all ntprofd serve checks passed"
exit "$failures"
