#!/usr/bin/python3
"""Checks `ntprofctl watch -o ndjson` output on stdin: every line parses as JSON and every field has
the one type `watch --help` documents (numbers are JSON numbers, never strings). Fails when no line
has a group, since then the group fields went unchecked. Exit 0 when all is well, else 1."""
import json
import sys


def integer(v):
    return isinstance(v, int) and not isinstance(v, bool)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def string(v):
    return isinstance(v, str)


def array(v):
    return isinstance(v, list)


UPDATE = {"interval_end_wall_ns": integer, "interval_s": number, "dropped_updates": integer,
          "groups": array, "notes": array}
GROUP = {"session": string, "name": string, "scope": string, "sampled": integer,
         "rate_per_s": number, "iops": number, "mean_ns": number, "p99_ns": integer,
         "stages": array, "line": string}
STAGE = {"stage": string, "label": string, "mean_ns": number, "share": number}


def check(obj, fields, where, errors):
    if set(obj) != set(fields):
        errors.append(f"{where}: fields {sorted(obj)}, wanted {sorted(fields)}")
    for name, is_type in fields.items():
        if name in obj and not is_type(obj[name]):
            errors.append(f"{where}: {name} = {obj[name]!r} is not {is_type.__name__}")


errors = []
groups = 0
for n, line in enumerate(sys.stdin, 1):
    try:
        update = json.loads(line)
    except json.JSONDecodeError as e:
        errors.append(f"line {n}: not JSON ({e}): {line.strip()}")
        continue
    check(update, UPDATE, f"line {n}", errors)
    for g, group in enumerate(update.get("groups", [])):
        groups += 1
        check(group, GROUP, f"line {n} group {g}", errors)
        for s, stage in enumerate(group.get("stages", [])):
            check(stage, STAGE, f"line {n} group {g} stage {s}", errors)
if groups == 0:
    errors.append("no line has a group: the group fields were not checked")
for e in errors[:10]:
    print(e)
sys.exit(1 if errors else 0)
