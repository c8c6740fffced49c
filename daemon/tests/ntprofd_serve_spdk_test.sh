#!/bin/bash
# `ntprofd serve --spdk BINARY`: the long-lived agent records SPDK-style processes (the probe
# contract's USDT probes, here through libntprof_probe.so) for sessions that ntprofctl starts on a
# real collector. The process starts after the session did (the agent must find it), its probes
# live in a library only its own LD_LIBRARY_PATH finds, and it fires commands of KNOWN target
# stamps (storage 500 us; tests/probe/library_target_app.c, a SIMULATED target). Checked: every
# command the process sampled reaches the collector once, with its exact stages; a second session
# finds a process started anew. Needs root (uprobes): 77 = skipped.
#   ntprofd_serve_spdk_test.sh NTPROFD NTPROF_COLLECTOR NTPROFCTL APP LIBRARY_DIR
set -uo pipefail
ntprofd=$1 collector=$2 ctl=$3 app=$4 libdir=$5
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (uprobes, /proc/PID/mem)"; exit 77; }
work=$(mktemp -d /tmp/ntprofd-serve-spdk.XXXXXX)
. "$(dirname "$0")/agent_test_lib.sh"

export NTPROF_COLLECTOR=unix:$work/collector.sock
"$collector" --listen "$NTPROF_COLLECTOR" --data-dir "$work/data" --metrics-listen "" >"$work/collector.log" 2>&1 &
collector_pid=$!
wait_for 10 "the collector" "$ctl" status
env -u LD_LIBRARY_PATH "$ntprofd" serve --role target --transport tcp --spdk "$app" --agent-name spdk1 \
  --collector "$NTPROF_COLLECTOR" --socket "$work/run/ntprofd.sock" --spool-dir "$work/spool" \
  --spool-no-fsync >"$work/agent.log" 2>&1 &
agent_pid=$!
wait_for 20 "the agent's stream" sh -c "\"$ctl\" status | grep -q 'spdk1 .*target'"

session() {  # NAME COMMANDS: a session, then the process (started after it), then stop
  "$ctl" start "$1" -s 2 >/dev/null || fail "start $1"
  wait_for 20 "session $1 recording" grep -q "session $1: recording" "$work/agent.log"
  sampled=$(LD_LIBRARY_PATH=$libdir "$app" "$2") || fail "the process never saw sampling switched on"
  sleep 1.5  # the agent's last interval
  "$ctl" stop "$1" >/dev/null || fail "stop $1"
  "$ctl" report "$1" -o json >"$work/$1.json" || fail "report $1"
  python3 - "$sampled" "$work/$1.json" <<'PY' || fail "session $1: $(cat "$work/$1.check")"
import json, sys
sampled = int(sys.argv[1]); report = json.load(open(sys.argv[2]))
problems = []
if report["records"]["target"] != sampled:
    problems.append(f"{report['records']['target']} records at the collector, the process sampled {sampled}")
for g in report["groups"]:
    stages = {s["id"]: s for s in g["stages"]}
    if not (stages["storage"]["min_us"] == stages["storage"]["max_us"] == 500.0):
        problems.append(f"storage {stages['storage']}")
if problems:
    open(sys.argv[2].replace(".json", ".check"), "w").write("; ".join(problems)); sys.exit(1)
print(f"{sampled} commands, storage 500 us exact")
PY
}
session spdk-a 400
session spdk-b 300
grep -q "recording SPDK target processes" "$work/agent.log" || fail "the agent did not say it records SPDK"
[ "$failures" = 0 ] && echo "ntprofd serve --spdk: both sessions complete and exact"
exit $((failures > 0))
