#!/bin/bash
# The Python binding of libntprof_probe.so against the real agent: a Python process fires commands
# with KNOWN stamp offsets (known_commands.py) through the library; `ntprofd record --spdk-host
# LIBRARY` attaches real uprobes to the library's USDT sites as the process loads it. Checked: every
# command the binding sampled is one record, every stage equals its injected duration exactly,
# identity, bytes and status arrive as given; the commands end with the NVMe/RDMA host probe, and
# the report says rdma (the file's header says tcp, the default) and names the driver a user-space
# initiator's, not SPDK's. Needs root (uprobes, /proc/PID/mem): 77 = skipped.
#
# usage: python_binding_test.sh NTPROFD NTPROFCTL LIBRARY BINDING_DIR
set -euo pipefail
ntprofd=$1 ntprofctl=$2 library=$3 binding=$4
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIPPED: uprobes need root"; exit 77; }
work=$(mktemp -d)
agent=
cleanup() { [ -z "$agent" ] || kill -INT "$agent" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$ntprofd" record --spdk-host "$library" -s 3 --salt 11 -i 1 -o "$work/host.ntp" >"$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 1 100); do grep -q "recording SPDK host" "$work/agent.log" && break; sleep 0.1; done
grep -q "recording SPDK host" "$work/agent.log" || { cat "$work/agent.log"; exit 1; }

# The agent attaches when it sees the library mapped; known_commands.py waits for it (the control
# block's sample rate turns non-zero), then fires.
fired=$(PYTHONPATH=$binding NTPROF_PROBE_LIB=$library python3 "$here/known_commands.py" 600 rdma)
sleep 1.5   # the last batch
kill -INT "$agent"; wait "$agent"; agent=
grep -q "attached to process" "$work/agent.log" || { echo "the agent never attached:"; cat "$work/agent.log"; exit 1; }

"$ntprofctl" report "$work/host.ntp" -o json --slowest 1000 >"$work/report.json"
python3 - "$fired" "$work/report.json" <<'PY'
import json, sys
fired = json.loads(sys.argv[1]); report = json.load(open(sys.argv[2]))
failures = []
def check(ok, what):
    if not ok: failures.append(what)
sampled = fired["sampled"]
check(150 <= sampled <= 250, f"{sampled} of 600 commands sampled at 1 in 3")
check(report["records"]["host"] == sampled, f"records {report['records']} != sampled {sampled}")
check(report["records"]["incomplete"] == 0, f"incomplete records: {report['records']}")
commands = report["slowest"]
check(len(commands) == sampled, f"{len(commands)} commands reported, the binding sampled {sampled}")
expected = {"end_to_end": 1160.0, "host_driver": 100.0, "network_and_target": 1060.0}
for c in commands:
    check(c["stages"] == expected, f"cid {c['cid']}: stages {c['stages']} != {expected}")
    check(c["qid"] == 1 and c["bytes"] == 4096, f"cid {c['cid']}: qid {c['qid']} bytes {c['bytes']}")
    check(c["slba"] % 8 == 0 and c["cid"] == (c["slba"] // 8) % 64, f"identity {c}")
    check(c["op"] == ("read" if c["opcode"] == 2 else "write"), f"op {c['op']} opcode {c['opcode']}")
check(report["transport"] == "rdma", f"transport {report['transport']}, the records are NVMe/RDMA")
for g in report["groups"]:
    for s in g["stages"]:
        check(s["negative_n"] == 0, f"{g['name']} {s['id']}: negative")
        if s["id"] == "host_driver":
            check(s["label"] == "host driver (user-space initiator)", f"{g['name']}: {s['label']}")
if failures:
    print("\n".join(failures[:20])); sys.exit(1)
print(f"python binding: {sampled} sampled commands recorded, stages exact")
PY
