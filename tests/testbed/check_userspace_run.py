#!/usr/bin/env python3
"""Checks one class of userspace_initiator_scenarios.sh against what the initiator did.

usage: check_userspace_run.py SUMMARY.json JOINED.json TARGET_ALONE.json DRIVE_DELAY_US
SUMMARY: the initiator's line (commands, sampled, bs, rw, qid, r2t_writes, in_capsule_bytes);
JOINED / TARGET_ALONE: `ntprofctl report -o json --slowest 100000` of host+target / target alone.
"""
import json
import sys

summary, joined, alone = (json.load(open(p)) for p in sys.argv[1:4])
delay_us = float(sys.argv[4])
name = f"{summary['rw']} {summary['bs']} B"
failures = []


def check(ok, what):
    if not ok:
        failures.append(f"{name}: {what}")


def stage(group, sid):
    return next((s for s in group["stages"] if s["id"] == sid), None)


r = joined["records"]
sampled = summary["sampled"]
check(sampled >= summary["commands"] / summary["sample_rate"] * 0.6,
      f"the binding sampled {sampled} of {summary['commands']} at 1 in {summary['sample_rate']}")
check(r["host"] == sampled, f"host records {r['host']} != {sampled} sampled by the initiator")
check(r["matched"] == r["host"] and r["host_only"] == 0 and r["incomplete"] == 0,
      f"not every host record matched: {r}")
check(r["target_only"] == 0, f"target records without a host half (not at the edges): {r}")
if summary["rw"] == "write" and summary["bs"] > summary["in_capsule_bytes"]:
    check(summary["r2t_writes"] == summary["commands"], "writes above the in-capsule size without an R2T")
for report, what in ((joined, "joined"), (alone, "target alone")):
    for g in report["groups"]:
        for s in g["stages"] + g.get("components", []):
            check(s["negative_n"] == 0, f"{what} {g['name']} {s['id']}: {s['negative_n']} negative")
joined_groups = joined["groups"]
check(len(joined_groups) == 1, f"{len(joined_groups)} groups: {[g['name'] for g in joined_groups]}")
for g in joined_groups:
    storage = stage(g, "storage")
    check(storage is not None and delay_us <= storage["p50_us"] <= delay_us * 1.10,
          f"storage p50 {storage and storage['p50_us']} us, the drive delay is {delay_us} us (+10 %)")
    for sid in ("host_driver", "network", "target_driver", "end_to_end"):
        check(stage(g, sid) is not None, f"no {sid} stage in {[s['id'] for s in g['stages']]}")
for c in joined["slowest"]:
    check(c["bytes"] == summary["bs"] and c["qid"] == summary["qid"], f"command {c}: bytes/qid")
    check(c["op"] == summary["rw"] and c["target"], f"command {c}: op or no target half")
a = alone["records"]
check(a["target"] == r["target"], f"target alone: {a['target']} records, joined run {r['target']}")
for g in alone["groups"]:
    storage = stage(g, "storage")
    check(storage is not None and storage["n"] == a["target"] and delay_us <= storage["p50_us"] <= delay_us * 1.10,
          f"target alone: storage {storage and (storage['n'], storage['p50_us'])}")
check(len(alone["slowest"]) == a["target"], "target alone: not every command listed")
if failures:
    print("\n".join(failures[:20]))
    sys.exit(1)
print(f"{name}: {r['host']} commands joined (100 %), storage p50 "
      f"{stage(joined_groups[0], 'storage')['p50_us']:.0f} us for a {delay_us:.0f} us drive, "
      f"target alone {a['target']} commands")
