#!/usr/bin/env python3
"""native_sampled_path.py - what the sampled path costs on a real CPU, outside emulation.

The test bed's NVMe-oF figures come from guests under TCG, where a rarely run path pays for what
the emulator's caches lost meanwhile (docs/lab/overhead-log.md). This benchmark runs the same
block-layer programs on this machine's own kernel and CPU: ntprofd records a loop device
(`--transport local`: block_rq_issue decides and inserts the in-flight record, block_rq_complete
finds it, emits it and deletes it - the map and ring-buffer work of every host sampled path) while
fio reads it, 4 KiB random reads at QD1, in rounds of runs in a rotating order:

  off          no agent: the block layer's mean latency of all reads (/sys/block/DEV/stat)
  rate 0       every hook attached, nothing sampled: what an unsampled command pays
  1 in N       the production setting
  1 in 1       every command on the sampled path: the path's cost while it stays in the caches

Printed: each configuration's IOPS against the off run of its round (median, bootstrap 95 % CI),
the BPF programs' own run time (kernel.bpf_stats_enabled) per I/O and per run of each hook, the
sampled path's cost per command ((BPF per I/O at 1 in 1) - (at rate 0)), and the penalty of a
sampled command at 1 in N: its end to end (the recording) over the block layer's mean of all reads
of the same run, divided by that ratio at 1 in 1 (what the two accountings disagree by).

  native_sampled_path.py [--rate 100] [--rounds 5] [--runtime 5] [--size-mib 256] [--json FILE]
                         [--build DIR] [--ntprofd PATH]

Needs root, a built ntprofd and ntprofctl (--build), fio, bpftool and losetup. The loop device is
backed by a file in /dev/shm, so a read costs the block layer, the loop driver and a page copy:
a fast device, on which a fixed cost per command weighs more than on an NVMe-oF one.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from agent_overhead import REPO, end_to_end_mean_us, median_ci

CONFIGS = ("off", "rate 0", "1 in N", "1 in 1")
SALT = 12345


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def our_programs():
    """run_cnt / run_time_ns of the agent's programs (block_rq_* of local_block.bpf.c), by id."""
    progs = json.loads(run("bpftool", "prog", "show", "--json"))
    return {p["id"]: p for p in progs if p.get("name", "").startswith("block_rq_") and "run_cnt" in p}


def program_runs(before, after):
    runs = {}
    for pid_, p in after.items():
        q = before.get(pid_, {"run_cnt": 0, "run_time_ns": 0})
        if p["run_cnt"] > q["run_cnt"]:
            c, n = runs.get(p["name"], (0, 0))
            runs[p["name"]] = (c + p["run_cnt"] - q["run_cnt"], n + p["run_time_ns"] - q["run_time_ns"])
    return runs


def diskstat(dev):
    f = open(f"/sys/block/{dev}/stat").read().split()
    return int(f[0]), int(f[3])  # reads completed, ms spent reading


class Agent:
    """ntprofd record on the loop device, running for one fio run."""

    def __init__(self, ntprofd, dev, rate, out):
        self.log = open(out + ".log", "w+")
        self.proc = subprocess.Popen(
            [ntprofd, "record", "--role", "host", "--transport", "local", "--device", dev,
             "-s", str(rate), "--salt", str(SALT), "-o", out],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            self.log.seek(0)
            if "recording" in self.log.read():
                return
            if self.proc.poll() is not None or time.time() > deadline:
                self.proc.kill()  # an agent that never said it records must not stay attached
                self.proc.wait()
                self.log.seek(0)
                raise RuntimeError(f"ntprofd did not start recording:\n{self.log.read()}")
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(2)
        if self.proc.wait(timeout=60) != 0:
            self.log.seek(0)
            raise RuntimeError(f"ntprofd exited {self.proc.returncode}:\n{self.log.read()}")


def one_run(config, args, dev, work):
    """One QD1 fio run under config: IOPS, the block layer's mean, BPF runs, sampled mean."""
    rate = {"off": None, "rate 0": 0, "1 in N": args.rate, "1 in 1": 1}[config]
    out = os.path.join(work, "run.ntp")
    agent = Agent(args.ntprofd, dev, rate, out) if rate is not None else None
    try:
        progs0, (reads0, ms0) = our_programs(), diskstat(dev)
        fio = json.loads(run("fio", f"--filename=/dev/{dev}", "--name=native", "--direct=1",
                             "--ioengine=psync", "--rw=randread", "--bs=4k", "--iodepth=1",
                             "--time_based", f"--runtime={args.runtime}", "--output-format=json"))
        progs1, (reads1, ms1) = our_programs(), diskstat(dev)
    finally:
        if agent:
            agent.stop()
    job = fio["jobs"][0]["read"]
    r = {"config": config, "iops": job["iops"], "ios": job["total_ios"],
         "block_us": 1000.0 * (ms1 - ms0) / max(1, reads1 - reads0),
         "bpf": program_runs(progs0, progs1)}
    if rate:
        r["sampled_us"] = end_to_end_mean_us(args.ntprofctl, out)
    return r


def summarize(runs, args):
    say = print
    rounds = {}
    for r in runs:
        rounds.setdefault(r["round"], {})[r["config"]] = r
    offs = [rr["off"] for rr in rounds.values() if "off" in rr]
    say(f"\n== loop device on /dev/shm, 4 KiB random reads, QD1, {args.rounds} rounds of "
        f"{args.runtime} s (kernel {os.uname().release}, this machine's CPU) ==")
    say(f"  off: median {median_ci([r['iops'] for r in offs])[0]:.0f} IOPS, block layer's mean "
        f"{median_ci([r['block_us'] for r in offs])[0]:.2f} us")
    say(f"  {'agent':<10} {'IOPS ratio [95% CI]':>26} {'BPF ns/IO':>10}")
    bpf_per_io = {}
    for config in CONFIGS[1:]:
        pairs = [rr for rr in rounds.values() if "off" in rr and config in rr]
        ratio = median_ci([p[config]["iops"] / p["off"]["iops"] for p in pairs])
        bpf_per_io[config] = median_ci(
            [sum(ns for _, ns in p[config]["bpf"].values()) / p[config]["ios"] for p in pairs])[0]
        name = f"1 in {args.rate}" if config == "1 in N" else config
        say(f"  {name:<10} {ratio[0]:>9.3f} [{ratio[1]:.3f}, {ratio[2]:.3f}] {bpf_per_io[config]:>10.0f}")
    say("  per hook (ns per run, median):")
    for config in CONFIGS[1:]:
        sel = [rr[config] for rr in rounds.values() if config in rr]
        hooks = sorted({h for r in sel for h in r["bpf"]})
        cells = []
        for h in hooks:
            v = [r["bpf"][h][1] / r["bpf"][h][0] for r in sel if h in r["bpf"]]
            cells.append(f"{h} {median_ci(v)[0]:.0f}")
        say(f"    {config:<8} " + ", ".join(cells))
    path_ns = bpf_per_io["1 in 1"] - bpf_per_io["rate 0"]
    say(f"  the sampled path, hot: {path_ns:.0f} ns of BPF per sampled command (1 in 1 - rate 0)")
    ratios = {c: [rr[c]["sampled_us"] / rr[c]["block_us"] for rr in rounds.values()
                  if c in rr and rr[c].get("sampled_us")] for c in ("1 in N", "1 in 1")}
    if ratios["1 in N"] and ratios["1 in 1"]:
        at_1 = median_ci(ratios["1 in 1"])[0]
        pen = median_ci([100.0 * (v / at_1 - 1) for v in ratios["1 in N"]])
        mean_n = median_ci([rr["1 in N"]["sampled_us"] for rr in rounds.values() if "1 in N" in rr])[0]
        say(f"  a sampled command at 1 in {args.rate}: {mean_n:.2f} us end to end; penalty "
            f"{pen[0]:+.1f} % [{pen[1]:+.1f}, {pen[2]:+.1f}] (1 in 1: sampled/all {at_1:.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--json", help="also write every run's measurements here")
    ap.add_argument("--build", default=os.environ.get("NTPROF_BUILD_DIR", os.path.join(REPO, "build")))
    ap.add_argument("--ntprofd", help="this ntprofd instead of the build's (to compare two builds)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("native_sampled_path.py: run as root (BPF, losetup, kernel.bpf_stats_enabled)")
    args.ntprofd = args.ntprofd or os.path.join(args.build, "daemon", "ntprofd")
    args.ntprofctl = os.path.join(args.build, "client", "ntprofctl")
    for tool in (args.ntprofd, args.ntprofctl):
        if not os.access(tool, os.X_OK):
            sys.exit(f"native_sampled_path.py: {tool} not built (cmake --build {args.build})")
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=False)
    stats_before = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    work = tempfile.mkdtemp(prefix="ntprof-native-")
    backing = tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="ntprof-native-", delete=False).name
    dev = None
    runs = []
    try:
        # written once, so every read copies a page that exists
        run("dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={args.size_mib}", "status=none")
        dev = os.path.basename(run("losetup", "--find", "--show", backing).strip())
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
        for rnd in range(args.rounds):
            order = CONFIGS[rnd % len(CONFIGS):] + CONFIGS[:rnd % len(CONFIGS)]
            for config in order:
                r = one_run(config, args, dev, work)
                r["round"] = rnd
                runs.append(r)
                print(f"round {rnd + 1}/{args.rounds} {config:<7} {r['iops']:>9.0f} IOPS  block "
                      f"{r['block_us']:.2f} us" + (f"  sampled {r['sampled_us']:.2f} us"
                                                    if r.get("sampled_us") else ""), flush=True)
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(stats_before)
        if dev:
            subprocess.run(["losetup", "-d", f"/dev/{dev}"], check=False)
        os.unlink(backing)
        subprocess.run(["rm", "-rf", work], check=False)
    if args.json:
        json.dump(runs, open(args.json, "w"), indent=1)
    summarize(runs, args)


if __name__ == "__main__":
    main()
