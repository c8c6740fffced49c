#!/bin/bash
# `ntprofd record --spdk-target BINARY` for a binary whose probes live in a shared library that
# only the process's own LD_LIBRARY_PATH finds (SPDK built with shared libraries keeps them in
# libspdk_nvmf.so): the agent says so, attaches through the process's maps, and records every
# sampled command with its known stages. Needs root (uprobes): 77 = skipped.
#
# usage: library_target_test.sh NTPROFD NTPROFCTL APP LIBRARY_DIR
set -euo pipefail
ntprofd=$1 ntprofctl=$2 app=$3 libdir=$4
[ "$(id -u)" = 0 ] || { echo "SKIPPED: uprobes need root"; exit 77; }
work=$(mktemp -d)
agent=
cleanup() { [ -z "$agent" ] || kill -INT "$agent" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

env -u LD_LIBRARY_PATH "$ntprofd" record --spdk-target "$app" -s 2 --salt 5 -i 1 \
  -o "$work/target.ntp" >"$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 1 100); do grep -q "recording SPDK target" "$work/agent.log" && break; sleep 0.1; done
grep -q "recording SPDK target" "$work/agent.log" || { echo "the agent refused the binary:"; cat "$work/agent.log"; exit 1; }
grep -q "not found here" "$work/agent.log" || { echo "the agent did not say why it looks at maps:"; cat "$work/agent.log"; exit 1; }

sampled=$(LD_LIBRARY_PATH=$libdir "$app" 400)
sleep 1.5
kill -INT "$agent"; wait "$agent"; agent=
"$ntprofctl" report "$work/target.ntp" -o json >"$work/report.json"
python3 - "$sampled" "$work/report.json" <<'PY'
import json, sys
sampled = int(sys.argv[1]); report = json.load(open(sys.argv[2]))
assert 150 <= sampled <= 250, f"{sampled} of 400 sampled at 1 in 2"
assert report["records"]["target"] == sampled, f"{report['records']} != {sampled} sampled"
(group,) = report["groups"]
stages = {s["id"]: s for s in group["stages"]}
assert stages["storage"]["min_us"] == stages["storage"]["max_us"] == 500.0, stages["storage"]
assert stages["target_total"]["p50_us"] == 540.0, stages["target_total"]
print(f"library on the process's path only: {sampled} commands recorded, storage 500 us exact")
PY
