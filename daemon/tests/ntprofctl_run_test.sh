#!/bin/bash
# `ntprofctl run` end to end on this machine: a real ntprof-collector, a real agent recording a loop
# device (--transport local, block-layer hooks), workloads of dd. Ground truth is the block layer's
# own count of completed I/Os (/sys/block/loopN/stat), 1 in 1 sampled, and the workload's own
# exit status and signals:
#   1. the session spans the workload: its report counts exactly the I/Os the workload did;
#   2. run exits with the workload's status, and the session is stopped after it;
#   3. SIGTERM to ntprofctl reaches the workload, the session is stopped, the status is 128 + 15;
#   4. a refused start (the agent records another session) does not run the workload: exit 1;
#   5. --baseline with --fail-if gates the run on its real records (JUnit written, exit 1 for a
#      crossed bound, one JSON document with -o json).
# Needs root, BPF with BTF and losetup: exits 77 (skipped) otherwise.
#   ntprofctl_run_test.sh NTPROFD NTPROF_COLLECTOR NTPROFCTL
set -uo pipefail
ntprofd=$1 collector=$2 ctl=$3
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (BPF programs, loop devices)"; exit 77; }
[ -e /sys/kernel/btf/vmlinux ] || { echo "SKIPPED: kernel has no BTF"; exit 77; }
command -v losetup >/dev/null || { echo "SKIPPED: no losetup"; exit 77; }

work=$(mktemp -d /tmp/ntprofctl-run.XXXXXX)
. "$(dirname "$0")/agent_test_lib.sh"

make_loop_device

csock="unix:$work/collector.sock"
export NTPROF_COLLECTOR=$csock
"$collector" --listen "$csock" --data-dir "$work/data" --metrics-listen "" --log-level info \
    >>"$work/collector.log" 2>&1 &
collector_pid=$!
wait_for 10 "the collector" "$ctl" status || exit 1
"$ntprofd" serve --role host --transport local --device "$dev" --agent-name agent1 \
    --collector "$csock" --socket "$work/run/ntprofd.sock" --spool-dir "$work/spool" \
    >>"$work/agent.log" 2>&1 &
agent_pid=$!
connected() { "$ctl" status | grep -q "agent1 .*host .*from"; }
wait_for 20 "the agent to connect" connected || exit 1

ios() { awk '{print $1 + $5}' "/sys/block/$dev/stat"; }  # completed reads + writes
# The workload: O_DIRECT 4 KiB reads and writes of distinct blocks (nothing merged or cached);
# udev reads a device after a writer closes it (blkid): settle inside the workload, so that read
# happens while the session records too.
cat >"$work/workload.sh" <<WORKLOAD
#!/bin/sh
dd if=$loop of=/dev/null bs=4k count=\$1 iflag=direct status=none
dd if=/dev/zero of=$loop bs=4k count=\$2 seek=2000 oflag=direct status=none
command -v udevadm >/dev/null && udevadm settle --timeout=5
exit \${3:-0}
WORKLOAD
chmod +x "$work/workload.sh"
stopped() { "$ctl" status "$1" | grep -q "session $1: stopped"; }
records() { sed -n 's/^records: \([0-9]*\) host.*/\1/p' "$1"; }

# ---- 1. the report counts the workload's I/Os ---------------------------------------------------
before=$(ios)
"$ctl" run io1 -- "$work/workload.sh" 300 100 >"$work/io1.out" 2>"$work/io1.err"
rc=$?
done_ios=$(( $(ios) - before ))
[ "$rc" = 0 ] || fail "run io1: exit $rc ($(cat "$work/io1.err"))"
got=$(records "$work/io1.out")
echo "run io1: $done_ios I/Os done, ${got:-no} records reported"
[ "$done_ios" -ge 400 ] || fail "run io1: only $done_ios I/Os done"
[ "${got:-0}" = "$done_ios" ] || fail "run io1: $got records reported, $done_ios I/Os done: $(cat "$work/io1.out")"
grep -q "^read 4KiB $dev " "$work/io1.out" || fail "run io1: no read group in $(cat "$work/io1.out")"
stopped io1 || fail "run io1: session not stopped"

# ---- 2. the workload's exit status ---------------------------------------------------------------
"$ctl" run io2 -- "$work/workload.sh" 20 0 3 >"$work/io2.out" 2>"$work/io2.err"
rc=$?
[ "$rc" = 3 ] || fail "run io2: exit $rc, wanted the workload's 3 ($(cat "$work/io2.err"))"
stopped io2 || fail "run io2: session not stopped"
grep -q "^records: " "$work/io2.out" || fail "run io2: no report after a failed workload"
"$ctl" run io2b -- /no/such/command >/dev/null 2>"$work/io2b.err"
rc=$?
[ "$rc" = 127 ] || fail "run of a missing command: exit $rc, wanted 127"
grep -q "cannot run /no/such/command" "$work/io2b.err" || fail "missing command: $(cat "$work/io2b.err")"
stopped io2b || fail "run io2b: session not stopped"

# ---- 3. SIGTERM ---------------------------------------------------------------------------------
start_s=$(date +%s)
"$ctl" run io3 -- sh -c "echo \$\$ >$work/io3.pid; exec sleep 60" >"$work/io3.out" 2>"$work/io3.err" &
run_pid=$!
wait_for 20 "the workload of io3" test -s "$work/io3.pid"
kill -TERM "$run_pid"
wait "$run_pid"
rc=$?
[ "$rc" = 143 ] || fail "run io3 after SIGTERM: exit $rc, wanted 143 ($(cat "$work/io3.err"))"
kill -0 "$(cat "$work/io3.pid")" 2>/dev/null && fail "run io3: the workload still runs after SIGTERM"
[ $(( $(date +%s) - start_s )) -lt 30 ] || fail "run io3: SIGTERM did not end the workload"
stopped io3 || fail "run io3: session not stopped after SIGTERM"

# ---- 4. a refused start -------------------------------------------------------------------------
"$ctl" start busy -s 1 >/dev/null || fail "start busy"
# An agent records sessions side by side under one salt: one naming its own salt is refused.
"$ctl" run io4 --salt 7 -- touch "$work/io4.ran" >"$work/io4.out" 2>"$work/io4.err"
rc=$?
[ "$rc" = 1 ] || fail "run io4 refused: exit $rc, wanted 1"
[ -e "$work/io4.ran" ] && fail "run io4: the workload ran although the agent refused"
grep -q "session busy records with salt .*, this one with 7" "$work/io4.err" || fail "run io4: $(cat "$work/io4.err")"
grep -q "COMMAND was not started" "$work/io4.err" || fail "run io4: $(cat "$work/io4.err")"
stopped io4 || fail "run io4: session not stopped"
"$ctl" stop busy >/dev/null || fail "stop busy"

# ---- 5. the gate against a baseline session -------------------------------------------------------
# Any latency is above -100 % of another: a bound the real records must cross; the +1000 % one
# (10 times io1's median) they must not.
"$ctl" run io5 --baseline io1 --fail-if 'local-device.mean > -100%' \
    --fail-if 'local-device.p50 > +1000%' --junit "$work/io5.xml" -- "$work/workload.sh" 300 100 \
    >"$work/io5.out" 2>"$work/io5.err"
rc=$?
[ "$rc" = 1 ] || fail "run io5 gate: exit $rc, wanted 1 ($(cat "$work/io5.err"))"
grep -q "^  FAIL  local-device.mean > -100%  read 4KiB $dev: " "$work/io5.out" ||
  fail "run io5: no crossed bound in $(cat "$work/io5.out")"
grep -q "^  pass  local-device.p50 > +1000%  read 4KiB $dev: " "$work/io5.out" ||
  fail "run io5: no passed bound in $(cat "$work/io5.out")"
grep -q 'failures="1"' "$work/io5.xml" || fail "run io5: JUnit $(cat "$work/io5.xml")"
"$ctl" run io6 -o json --baseline io1 --fail-if 'local-device.p50 > +1000%' -- \
    "$work/workload.sh" 300 0 >"$work/io6.out" 2>"$work/io6.err"
rc=$?
[ "$rc" = 0 ] || fail "run io6: exit $rc ($(cat "$work/io6.err"))"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["report"]["groups"] and d["comparison"]["groups"], d.keys()
assert d["gate"]["verdict"] == "passed", d["gate"]' "$work/io6.out" || fail "run io6: json"

[ "$failures" = 0 ] && echo "all passed"
exit $(( failures > 0 ))
