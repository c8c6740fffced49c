#!/usr/bin/env python3
"""Checks one I/O class of a real SPDK run (nvmf_tgt recorded by ntprofd, with its host).

usage: check_spdk_run.py REPORT.json BYTES DELAY_US [--storage-above FRACTION | --storage-floor FRACTION]
                        [--class OP]
       check_spdk_run.py REPORT.json BYTES DELAY_US --rise-over BASE.json BASE_US
REPORT: `ntprofctl report host.ntp target.ntp -o json --slowest 100000`, recorded with the delay
bdev at DELAY_US. Every report must have every command matched (after the session's edges), no
negative stage, the I/O size as bytes, status 0 and only the I/O group; with --class OP (read or
write), the run's class is that group, and the others may only be reads: a kernel host's own I/O
(under systemd, udev has blkid probe a namespace each time a writer closes it, as fio does after
setting up a write job and at its end; reads of various sizes near the namespace's end), never an
admin or fabrics command. Storage (its p50):
  default           within 10 % of DELAY_US;
  --storage-above   within [DELAY_US, DELAY_US x (1 + FRACTION)] (an emulated machine adds its
                    overhead to the delay, it never takes any away);
  --storage-floor   its minimum within [DELAY_US, DELAY_US x (1 + FRACTION)], the p50 at least
                    DELAY_US: where the median cannot be bounded (a polling reactor sharing an
                    emulated vCPU with the kernel runs late by whole scheduler slices, adding
                    anything up to several times the delay), the fastest command still shows
                    the delay alone, and none may complete before it;
  --rise-over       BASE was recorded the same way with the delay bdev at BASE_US: storage must
                    rise from BASE to REPORT by DELAY_US - BASE_US within 10 % of that difference
                    (what the bdev below the delay spends, e.g. the malloc bdev's copy, is in both
                    and cancels), and neither p50 may lie below its delay (the delay bdev never
                    completes early; less 0.1 %: SPDK converts microseconds to whole ticks per
                    microsecond).
"""
import json
import sys

args = sys.argv[1:]
class_op = None
if "--class" in args:
    i = args.index("--class")
    class_op = args[i + 1]
    del args[i:i + 2]
path, nbytes, delay_us = args[0], int(args[1]), float(args[2])
mode = args[3] if len(args) > 3 else None
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def storage_p25(report):
    """The 25th percentile of storage over the report's commands (all of them with --slowest 100000)."""
    values = sorted(c["stages"]["storage"] for c in report["slowest"] if "storage" in c["stages"])
    return values[len(values) // 4] if values else 0.0


def is_class(op, size):
    return class_op is None or (op == class_op and size == nbytes)


def storage_p50(report_path, report):
    """Checks a report's structure; the class group's storage p50 (None when it has none)."""
    stage = storage_stage(report_path, report)
    return stage["p50_us"] if stage else None


def storage_stage(report_path, report):
    """Checks a report's structure; the class group's storage distribution (None when it has none)."""
    r = report["records"]
    check(r["matched"] > 50, f"{report_path}: only {r['matched']} commands matched: {r}")
    # A half without a partner before the other agent's first matched command or after its last
    # lies at the session's edges (e.g. perf's first commands, before the host agent found perf):
    # no loss. One in between is.
    check(r["host_only"] == r["host_only_at_edges"] and r["target_only"] == r["target_only_at_edges"]
          and r["incomplete"] == 0,
          f"{report_path}: halves left unmatched (not at the session's edges) or incomplete: {r}")
    groups = report["groups"]
    ours = [g for g in groups if is_class(g["op"], g["bytes"])]
    check(len(groups) == 1 if class_op is None else
          len(ours) == 1 and all(g["op"] == "read" for g in groups if g not in ours),
          f"{report_path}: groups {[g['name'] for g in groups]}: one I/O class expected"
          f"{' (and reads)' if class_op else ''}, no admin/fabrics")
    for g in groups:
        for s in g["stages"] + g.get("components", []):
            check(s["negative_n"] == 0, f"{report_path}: {g['name']} {s['id']}: {s['negative_n']} negative")
    storage = None
    for g in ours:
        stages = {s["id"]: s for s in g["stages"]}
        check(g["bytes"] == nbytes, f"{report_path}: {g['name']}: {g['bytes']} bytes, perf ran {nbytes}")
        for sid in ("host_driver", "network", "target_driver", "storage", "end_to_end"):
            check(sid in stages, f"{report_path}: {g['name']}: no {sid} stage")
        if "storage" in stages:
            storage = stages["storage"]
    for c in report["slowest"]:
        check((c["bytes"] == nbytes or not is_class(c["op"], c["bytes"])) and c["qid"] != 0 and c["target"],
              f"{report_path}: command {c}")
    check(not any("negative" in n for n in report["notes"]), f"{report_path}: notes: {report['notes']}")
    return storage


report = json.load(open(path))
storage_dist = storage_stage(path, report)
storage = storage_dist["p50_us"] if storage_dist else None
name = next((g["name"] for g in report["groups"] if is_class(g["op"], g["bytes"])), "?")
matched = report["records"]["matched"]
if mode == "--rise-over":
    base_path, base_us = args[4], float(args[5])
    base_report = json.load(open(base_path))
    base_storage = storage_p50(base_path, base_report)
    step = delay_us - base_us
    if storage is not None and base_storage is not None:
        rise = storage - base_storage
        # A machine busy beside the two polling processes delays the reactor, and so the delay
        # bdev's poller, by whole scheduler slices, which only ever adds time: the lower quartile
        # and the load average say whether that is what moved the median.
        check(abs(rise - step) <= 0.1 * step,
              f"{name}: storage p50 rose {rise:.0f} us ({base_storage:.0f} -> {storage:.0f}) when the delay "
              f"bdev went from {base_us:.0f} to {delay_us:.0f} us; {step:.0f} +- {0.1 * step:.0f} expected "
              f"(p25 {storage_p25(base_report):.0f} -> {storage_p25(report):.0f} us; load average "
              f"{open('/proc/loadavg').read().split()[0]})")
        for p50, d in ((base_storage, base_us), (storage, delay_us)):
            check(p50 >= 0.999 * d, f"{name}: storage p50 {p50:.0f} us, below the delay bdev's {d:.0f} us")
    summary = (f"{name}: {base_report['records']['matched']} + {matched} matched, storage p50 "
               f"{base_storage or 0:.0f} us at {base_us:.0f} us, {storage or 0:.0f} us at {delay_us:.0f} us: "
               f"rose {(storage or 0) - (base_storage or 0):.0f} us for +{step:.0f} us")
elif mode == "--storage-floor":
    fraction = float(args[4])
    low, high = 0.999 * delay_us, delay_us * (1 + fraction)
    smallest = storage_dist["min_us"] if storage_dist else None
    check(smallest is not None and low <= smallest <= high,
          f"{path}: {name}: storage minimum {smallest} us, outside [{delay_us:.0f}, {high:.0f}] us "
          f"for a {delay_us:.0f} us delay")
    check(storage is not None and storage >= low,
          f"{path}: {name}: storage p50 {storage} us, below the {delay_us:.0f} us delay")
    summary = (f"{name}: {matched} matched, storage min {smallest or 0:.0f} us, p50 {storage or 0:.0f} us "
               f"({100 * ((storage or 0) / delay_us - 1):+.0f} %) for a {delay_us:.0f} us delay")
else:
    above = float(args[4]) if mode == "--storage-above" else None
    low, high = (delay_us, delay_us * (1 + above)) if above is not None else (delay_us * 0.9, delay_us * 1.1)
    check(storage is not None and low <= storage <= high,
          f"{path}: {name}: storage p50 {storage} us, outside [{low:.0f}, {high:.0f}] us "
          f"for a {delay_us:.0f} us delay bdev")
    summary = f"{name}: {matched} matched, storage p50 {storage or 0:.0f} us for a {delay_us:.0f} us delay bdev"
if failures:
    print("\n".join(failures[:20]))
    sys.exit(1)
print(summary)
