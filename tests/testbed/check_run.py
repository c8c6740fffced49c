#!/usr/bin/env python3
"""Checks recorded test-bed runs against ground truth.

  check_run.py NTPROFCTL consistent RUN_DIR [--latency]
                                             100 % matched, every stage >= 0, stages sum to end to end;
                                             with --latency also: host end to end at most 10 % below
                                             and 2 % above the block layer's own accounting (record
                                             with -s 1 so every command carries the same probes);
                                             fio's latencies printed
  check_run.py NTPROFCTL shift BASE_DIR NEW_DIR STAGE MICROSECONDS [--classes]
                                             storage: its median rose by MICROSECONDS +- 10 %;
                                             network: it rose as much as end to end did (+-10 % of
                                             MICROSECONDS), which rose by at least the delay;
                                             either way no other stage's median rose by more than
                                             10 % of it. --classes: in every I/O class (group) of
                                             the run, each with the number of times its command
                                             crosses the delayed path (R2T and RDMA READ writes
                                             cross a link delay twice); see shift_one
  check_run.py NTPROFCTL classes RUN_DIR     consistent, and the run has the four I/O classes (read
                                             and write, 4 KiB and 128 KiB), each with every stage
                                             above 0 and the components its transport gives it

Prints one line per check ("ok: ..." / "FAIL: ...") and exits 1 if any failed.
"""
import json
import subprocess
import sys

CTL = None
failures = 0


def check(ok, what):
    global failures
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1


def report(run_dir):
    out = subprocess.run([CTL, "report", run_dir, "-o", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def io_group(rep):
    """The group of the fio workload: the one with the most sampled commands."""
    groups = [g for g in rep["groups"] if g["op"] in ("read", "write")]
    return max(groups, key=lambda g: g["latency"]["n"])


def stage_means(group):
    return {s["id"]: s["mean_us"] for s in group["stages"]}


def component_means(group):
    return {c["id"]: c["mean_us"] for c in group.get("components", [])}


CLASSES = [("read", 4096), ("write", 4096), ("read", 131072), ("write", 131072)]
FIVE_STAGES = ["host_block", "host_driver", "network", "target_driver", "storage"]


def class_groups(rep):
    """The run's I/O class groups by (op, bytes)."""
    return {(g["op"], g["bytes"]): g for g in rep["groups"] if g["op"] in ("read", "write")}


def expected_components(transport, op, size):
    """Components a class must show (mean > 0) on a transport."""
    if transport == "tcp":
        if op == "write" and size > 16384:
            return ["r2t_round_trip", "host_r2t_data"]   # beyond nvmet-tcp's in-capsule limit
        return ["read_data_transfer"] if op == "read" else []
    if transport == "rdma":
        if op == "write" and size > 4096:
            return ["rdma_data_transfer"]                # the target pulls the data: RDMA READ
        return []                                        # 4 KiB writes travel in the capsule; a
                                                         # read's RDMA WRITE stays in fabric
    return []


def round_trips(transport, op, size):
    """How often a command of the class crosses the target->host direction where netem delays."""
    if op == "write" and "r2t_round_trip" in expected_components(transport, op, size):
        return 2
    if transport == "rdma" and op == "write" and size > 4096:
        return 2
    return 1


def consistent(run_dir):
    rep = report(run_dir)
    rec = rep["records"]
    check(rec["host"] > 0 and rec["matched_percent"] == 100.0,
          f"{run_dir}: {rec['matched']} of {rec['host']} host records matched ({rec['matched_percent']:.2f} %)")
    # A command whose hook the kernel skipped (a program nested on one CPU: an interrupt ran the
    # same hook for another command) misses that stamp; the report counts both. Any other
    # incomplete record is a defect.
    skipped = rep.get("probe_runs_skipped", 0)
    check(rec["incomplete"] <= skipped,
          f"{run_dir}: {rec['incomplete']} records missing a stamp"
          + (f", {skipped} probe runs skipped by the kernel" if skipped else ""))
    for g in rep["groups"]:
        for s in g["stages"]:
            check(s["min_us"] >= 0, f"{run_dir} {g['name']}: {s['id']} min {s['min_us']:.2f} us >= 0")
        means = stage_means(g)
        if g["scope"] == "joined":
            zero = [k for k in FIVE_STAGES if not means.get(k, 0) > 0]
            check(not zero, f"{run_dir} {g['name']}: every stage above 0" + (f" (0: {', '.join(zero)})" if zero else ""))
        parts = sum(v for k, v in means.items() if k != "end_to_end")
        check(abs(parts - means["end_to_end"]) < 0.01,
              f"{run_dir} {g['name']}: stages sum to end to end ({parts:.2f} vs {means['end_to_end']:.2f} us)")
    return rep


def diskstat_mean_us(run_dir, op):
    """Mean latency of the run's commands by the kernel's own block accounting (/sys/block/DEV/stat:
    fields 1/4 = reads completed / ms spent, 5/8 = writes): the block layer's start-to-completion
    time, the same span as H0-H5."""
    before = [int(x) for x in open(f"{run_dir}/diskstat.before").read().split()]
    after = [int(x) for x in open(f"{run_dir}/diskstat.after").read().split()]
    ios, ticks = (0, 3) if op == "read" else (4, 7)
    return (after[ticks] - before[ticks]) * 1000 / (after[ios] - before[ios])


def latency(run_dir):
    g = io_group(report(run_dir))
    e2e = g["latency"]["mean_us"]
    kernel_us = diskstat_mean_us(run_dir, g["op"])
    # The kernel's accounting starts at the same rq->start_time_ns as H0 but closes in
    # __blk_mq_end_request, after the bio completion callbacks (direct I/O, the io_uring CQE, the
    # wake-up of fio) that follow block_rq_complete (H5). So end to end may sit below it by those
    # callbacks (measured 2.8-5.3 % under TCG), never noticeably above it.
    gap = (kernel_us - e2e) / kernel_us * 100
    check(-2 <= gap <= 10, f"{run_dir} {g['name']}: end to end {e2e:.1f} us vs the block layer's "
                           f"accounting {kernel_us:.1f} us ({gap:+.1f} %, within -2..+10 %)")
    # fio is reported, not asserted: under emulation its clat misses or adds whole system calls
    # (io_uring: the capsule is sent inside the submit call, before clat starts; psync: clat adds
    # the syscall and the wake-up, 200+ us under TCG). The README explains the gap.
    with open(f"{run_dir}/fio.json") as f:
        job = json.load(f)["jobs"][0]
    side = "read" if g["op"] == "read" else "write"
    clat_us = job[side]["clat_ns"]["mean"] / 1000
    lat_us = job[side]["lat_ns"]["mean"] / 1000
    print(f"info: {run_dir} {g['name']}: fio clat {clat_us:.1f} us ({(clat_us - e2e) / clat_us * 100:+.1f} %), "
          f"fio lat {lat_us:.1f} us ({(lat_us - e2e) / lat_us * 100:+.1f} %) vs end to end {e2e:.1f} us")


def classes(run_dir):
    rep = consistent(run_dir)
    transport = rep.get("transport", "")
    groups = class_groups(rep)
    for op, size in CLASSES:
        g = groups.get((op, size))
        check(g is not None, f"{run_dir}: class {op} {size // 1024}KiB recorded")
        if g is None:
            continue
        comps = component_means(g)
        for cid in expected_components(transport, op, size):
            check(comps.get(cid, 0) > 0, f"{run_dir} {g['name']}: component {cid} "
                                         f"{comps.get(cid, 0):.1f} us > 0 ({transport})")


# However slow the machine ran, no other stage may rise by half the delay: the slowdown's share
# grows with the stage's base (under load it allowed network 7,832 us for a 5,000 us drive delay),
# and an allowance near the delay would pass the whole delay landing in the wrong stage.
LEAK_CAP = 0.5


def stage_medians(group):
    return {s["id"]: s["p50_us"] for s in group["stages"]}


def shift_one(label, base, new, stage, injected_us, windowed=False):
    """base/new: the class's groups. Compared by median: under emulation a few commands wait tens
    of ms on a descheduled vCPU (p99 >> p50), which moves a mean by more than the tolerance.

    windowed: a 128 KiB transfer crosses the link as a window of packets. A link delay then adds
    more than the one-way delay (the sender waits for acks: TCP's congestion window, soft-RoCE's
    go-back-N), and any change of I/O rate (a drive delay) changes how fast the window opens. The
    real added latency is then the block layer's end-to-end change, and that must be in network."""
    mean_delta = stage_means(new)[stage] - stage_means(base)[stage]
    e2e_delta = stage_medians(new)["end_to_end"] - stage_medians(base)["end_to_end"]
    base, new = stage_medians(base), stage_medians(new)
    delta = new[stage] - base[stage]
    if stage == "network":
        # What a link delay adds is the end to end's rise, not the netem setting: TCP's window
        # makes a 128 KiB rise larger, soft-RoCE's CPU-bound transfer under emulation overlaps
        # with it and makes it smaller, and even a 4 KiB command gains 3-13 % more than the
        # setting under TCG (netem's timer, idle vCPUs waking; measured, in the end to end as
        # much as in network). All of the rise must be in network, and at least the delay must
        # have been added (half of it for windowed transfers).
        floor = 0.5 if windowed else 0.9
        check(abs(delta - e2e_delta) <= 0.10 * injected_us and e2e_delta >= floor * injected_us,
              f"{label}: {stage} median rose {delta:.1f} us = end to end's rise {e2e_delta:.1f} us "
              f"(+-10 % of the {injected_us:.0f} us injected, {delta / injected_us - 1:+.1%} of it; "
              f"mean rose {mean_delta:.1f} us)")
    else:
        check(abs(delta - injected_us) <= 0.10 * injected_us,
              f"{label}: {stage} median rose {delta:.1f} us for {injected_us:.0f} us injected (+-10 %; "
              f"mean rose {mean_delta:.1f} us)")
    # The machine itself runs slower after the VMs sat idle through a wait: all CPU work of a
    # command took 2-3x as long on the 2-core build machine (host driver 25 -> 73 us, target driver
    # and network alike; old and new BPF code, 6.1 and 6.12). The scenarios therefore compare two
    # runs that both wait (run-scenarios.sh: base delay, then base + the delay); what slowdown is
    # left shows in the host driver stage (CPU work on the host that no drive or link delay
    # touches), and each stage may grow by it on top of the 10 % tolerance.
    slowdown = max(1.0, new.get("host_driver", 0) / base["host_driver"]) if base.get("host_driver") else 1.0
    for sid in base:
        if sid in (stage, "end_to_end"):
            continue
        # The delay must not leak into another stage: none may rise by more than 10 % of it (the
        # network 20 %, below; plus the slowdown). A leak would also show as the delayed stage rising less than injected,
        # which is checked above. A stage may fall: under emulation a slower I/O rate leaves the
        # VMs' network stacks more CPU, and 128 KiB transfers then cross faster.
        moved = new.get(sid, 0) - base[sid]
        if windowed and sid == "network":
            print(f"info: {label}: {sid} median moved {moved:+.1f} us (windowed transfer, not checked)")
            continue
        # The network stage holds both VMs' wake-ups: the host's vCPU takes the reply after idling
        # through the delay. Under TCG a 10 ms drive delay moved its median by -2.3 to +1.7 ms
        # (median +0.3 ms; 56 drive-delay class runs of earlier scenario logs, 6.1 and 6.12, TCP
        # and RDMA), more than the host driver's slowdown shows: twice the tolerance there. A real
        # leak would also leave the delayed stage short of the delay, which is checked above.
        share = 0.20 if sid == "network" else 0.10
        allowed = min(share * injected_us + (slowdown - 1.0) * base[sid], LEAK_CAP * injected_us)
        check(moved <= allowed,
              f"{label}: {sid} median moved {moved:+.1f} us (may rise {allowed:.0f} us at most: {share:.0%} "
              f"of the delay + the machine's slowdown x{slowdown:.2f} of its {base[sid]:.1f} us, "
              f"never more than {LEAK_CAP:.0%} of the delay)")


def shift(base_dir, new_dir, stage, injected_us, per_class=False):
    base_rep, new_rep = report(base_dir), report(new_dir)
    if not per_class:
        shift_one(new_dir, io_group(base_rep), io_group(new_rep), stage, injected_us)
        return
    transport = new_rep.get("transport", "")
    base_groups, new_groups = class_groups(base_rep), class_groups(new_rep)
    # only the run's own classes: under systemd, udev probes a namespace that comes back after a
    # drive-delay change (blkid reads of other sizes, recorded like any I/O)
    for key in CLASSES:
        if key not in new_groups:
            check(False, f"{new_dir}: class {key} missing")
            continue
        if key not in base_groups:
            check(False, f"{new_dir}: class {key} missing in {base_dir}")
            continue
        op, size = key
        times = round_trips(transport, op, size) if stage == "network" else 1
        shift_one(f"{new_dir} {new_groups[key]['name']} (x{times})", base_groups[key],
                  new_groups[key], stage, injected_us * times, windowed=size > 4096)


def main():
    global CTL
    CTL = sys.argv[1]
    verb = sys.argv[2]
    if verb == "consistent":
        consistent(sys.argv[3])
        if "--latency" in sys.argv[4:]:
            latency(sys.argv[3])
    elif verb == "classes":
        classes(sys.argv[3])
    elif verb == "shift":
        shift(sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]), "--classes" in sys.argv[7:])
    else:
        sys.exit(f"unknown check {verb}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
