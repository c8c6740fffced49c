#!/usr/bin/env python3
"""compare_reports.py FLEET.json FILES.json [--groups-only] [--op OP]

Exits 0 when the report from ClickHouse (ntprofctl report --clickhouse -o json) says what the file
report of the same records says: every group's stages, components and percentiles, and (unless
--groups-only) the record counts, and the slowest commands when asked for. What the fleet store does not hold is left out of the
comparison: throughput (device counters), the agents' losses, the span of the recording and the
notes. --op keeps only the file report's groups of that operation (a --class selection)."""
import json
import sys


def groups(report, op=None):
    out = []
    for g in report["groups"]:
        if op and g["op"] != op:
            continue
        g = dict(g)
        g.pop("throughput", None)
        out.append(g)
    return out


def main():
    args = sys.argv[1:]
    groups_only = "--groups-only" in args
    op = args[args.index("--op") + 1] if "--op" in args else None
    fleet, files = (json.load(open(p)) for p in args[:2])
    problems = []
    a, b = groups(fleet), groups(files, op)
    if a != b:
        for ga, gb in zip(a, b):
            for key in sorted(set(ga) | set(gb)):
                if ga.get(key) != gb.get(key):
                    problems.append(f"group {ga.get('name')}: {key}: {ga.get(key)} != {gb.get(key)}")
        if len(a) != len(b):
            problems.append(f"{len(a)} groups from ClickHouse, {len(b)} from the files")
    if not groups_only and fleet["records"] != files["records"]:
        problems.append(f"records: {fleet['records']} != {files['records']}")
    if fleet.get("slowest") != files.get("slowest"):
        problems.append(f"slowest: {fleet.get('slowest')} != {files.get('slowest')}")
    for p in problems[:20]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
