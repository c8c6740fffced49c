#!/usr/bin/env python3
"""Checks one I/O class of spdk_pair_test.sh (real nvmf_tgt + perf, both recorded by ntprofd).

usage: check_spdk_run.py REPORT.json BYTES DELAY_US [--storage-above FRACTION]
REPORT: `ntprofctl report host.ntp target.ntp -o json --slowest 100000`.
Storage must be within 10 % of DELAY_US; with --storage-above, within [DELAY_US, DELAY_US x
(1 + FRACTION)] (an emulated machine adds its overhead to the delay, it never takes any away).
"""
import json
import sys

report = json.load(open(sys.argv[1]))
nbytes, delay_us = int(sys.argv[2]), float(sys.argv[3])
above = float(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--storage-above" else None
low, high = (delay_us, delay_us * (1 + above)) if above is not None else (delay_us * 0.9, delay_us * 1.1)
failures = []


def check(ok, what):
    if not ok:
        failures.append(f"{sys.argv[1]}: {what}")


r = report["records"]
check(r["matched"] > 50, f"only {r['matched']} commands matched: {r}")
check(r["host_only"] == 0 and r["target_only"] == 0 and r["incomplete"] == 0,
      f"halves left unmatched (not at the session's edges) or incomplete: {r}")
groups = report["groups"]
check(len(groups) == 1, f"groups {[g['name'] for g in groups]}: one I/O class expected, no admin/fabrics")
for g in groups:
    stages = {s["id"]: s for s in g["stages"]}
    for s in g["stages"] + g.get("components", []):
        check(s["negative_n"] == 0, f"{g['name']} {s['id']}: {s['negative_n']} negative")
    storage = stages.get("storage")
    check(storage is not None and low <= storage["p50_us"] <= high,
          f"{g['name']}: storage p50 {storage and storage['p50_us']} us, outside [{low:.0f}, {high:.0f}] us "
          f"for a {delay_us:.0f} us delay bdev")
    check(g["bytes"] == nbytes, f"{g['name']}: {g['bytes']} bytes, perf ran {nbytes}")
    for sid in ("host_driver", "network", "target_driver", "storage", "end_to_end"):
        check(sid in stages, f"{g['name']}: no {sid} stage")
for c in report["slowest"]:
    check(c["bytes"] == nbytes and c["qid"] != 0 and c["target"], f"command {c}")
check(not any("negative" in n for n in report["notes"]), f"notes: {report['notes']}")
if failures:
    print("\n".join(failures[:20]))
    sys.exit(1)
g = groups[0]
print(f"{g['name']}: {r['matched']} matched, storage p50 "
      f"{next(s for s in g['stages'] if s['id'] == 'storage')['p50_us']:.0f} us for a {delay_us:.0f} us delay bdev")
