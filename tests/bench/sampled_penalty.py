#!/usr/bin/env python3
"""sampled_penalty.py - where a sampled command's extra latency comes from, in the test bed.

A sampled command runs the hooks' sampled path: map updates, more probe reads, its record. This
benchmark tells how much longer that makes it, and which side pays, from 4 KiB random reads at QD1
in rounds of four runs in a rotating order:

  off          no agents: the block layer's mean latency of all reads
  1 in 1       every command sampled on both sides: the sampled path run for every command
  1 in N       both agents at 1 in N with the same salt (the same commands on both sides)
  host only    the host at 1 in N, the target at 1 in N with another salt: the target's sampled
               path then runs for other commands, so the host's sampled ones carry only the host's

With --baseline-ntprofd, every round also runs "1 in 1" and "1 in N" with that binary (another
build's agent, on both sides), so two builds' penalties are compared in the same rounds of the
same bed: under emulation the guests' speed drifts between runs far more than a change moves it.

A sampled command's penalty is its end to end (the host recording's mean) against the mean of
all reads in the same run (the block layer's accounting, /sys/block/DEV/stat), divided by that
ratio at 1 in 1 (where both are the same commands, so it is what the two clocks disagree by).
Printed: each figure's median over the rounds with a bootstrap 95 % confidence interval, and
the 1 in 1 run's mean latency against the off run of its round (the sampled path run for every
command: what it costs when its code and data stay in the caches).

  sampled_penalty.py [--transports tcp,rdma] [--rate 100] [--rounds 5] [--runtime 15]
                     [--json FILE] [--baseline-ntprofd PATH]

Needs a running test bed (deploy/testbed/tb up --transport tcp,rdma) and a built ntprofctl.
"""
import argparse
import json
import os
import statistics
import sys
import time

from agent_overhead import (BASELINE_IN_GUEST, REPO, end_to_end_mean_us, guest, median_ci,
                            prepare_bed, share_baseline, tb)

SALT, OTHER_SALT = 12345, 54321
CONFIGS = ("off", "1 in 1", "1 in N", "host only")
BASELINE_CONFIGS = ("1 in 1 baseline", "1 in N baseline")


def run_config(config, transport, dev, rate, ntprofctl, share, runtime):
    """One QD1 fio run under config: the block layer's mean and the sampled commands' mean (us)."""
    sides = {"off": None,
             "1 in 1": {"host": (1, SALT), "target": (1, SALT)},
             "1 in N": {"host": (rate, SALT), "target": (rate, SALT)},
             "host only": {"host": (rate, SALT), "target": (rate, OTHER_SALT)}}[
                 config.removesuffix(" baseline")]
    binary = BASELINE_IN_GUEST if config.endswith(" baseline") else "/mnt/host/bin/ntprofd"
    if sides:
        guest("target", "start", "target", transport, sides["target"][0], "-", sides["target"][1],
              binary)
        guest("host", "start", "host", transport, sides["host"][0], os.path.basename(dev),
              sides["host"][1], binary)
    try:
        fio = json.loads(guest("host", "fio", dev, 1, runtime).strip().splitlines()[-1])
    finally:
        if sides:
            guest("host", "stop")
            guest("target", "stop")
    run = {"transport": transport, "config": config, "iops": fio["iops"],
           "block_us": 1000.0 * fio["block_read_ms"] / fio["block_reads"]}
    if sides:
        tb("ssh", "host", "cp /tmp/ntprof-overhead/agent.ntp /mnt/host/out/penalty-host.ntp")
        run["sampled_us"] = end_to_end_mean_us(ntprofctl, os.path.join(share, "out", "penalty-host.ntp"))
    return run


def summarize(runs, transports, rate):
    lines = []
    say = lines.append
    for transport in transports:
        rounds = {}
        for r in runs:
            if r["transport"] == transport:
                rounds.setdefault(r["round"], {})[r["config"]] = r
        full = [c for c in rounds.values() if all(k in c for k in CONFIGS) and
                all(c[k].get("sampled_us") for k in CONFIGS[1:])]
        if not full:
            continue

        def ratio(c, k):
            return c[k]["sampled_us"] / c[k]["block_us"]

        say(f"\n== NVMe/{transport.upper()}, 4 KiB random reads, QD1: a sampled command's penalty "
            f"({len(full)} rounds) ==")
        say(f"  1 in 1 / off, mean latency of all reads: {fmt(median_ci([c['1 in 1']['block_us'] / c['off']['block_us'] for c in full]))}"
            f"   (every command on the sampled path)")
        say(f"  clocks at 1 in 1 (sampled end to end / block layer, same commands): "
            f"{fmt(median_ci([ratio(c, '1 in 1') for c in full]))}")
        both = [ratio(c, "1 in N") / ratio(c, "1 in 1") for c in full]
        host = [ratio(c, "host only") / ratio(c, "1 in 1") for c in full]
        mean_us = statistics.median(c["1 in N"]["block_us"] for c in full)
        say(f"  penalty at 1 in {rate}, both sides:     {pct(median_ci(both))}")
        say(f"  penalty at 1 in {rate}, host side only: {pct(median_ci(host))}")
        say(f"  the target's part (both - host only):  "
            f"{100.0 * (statistics.median(both) - statistics.median(host)):+.1f} %")
        say(f"  mean latency of all reads at 1 in {rate}: {mean_us:.0f} us")
        baseline = [c for c in full if all(c.get(k, {}).get("sampled_us") for k in BASELINE_CONFIGS)]
        if baseline:
            old = [ratio(c, "1 in N baseline") / ratio(c, "1 in 1 baseline") for c in baseline]
            new = [ratio(c, "1 in N") / ratio(c, "1 in 1") for c in baseline]
            say(f"  baseline build, penalty at 1 in {rate}, both sides: {pct(median_ci(old))}"
                f"   (this build, same {len(baseline)} rounds: {pct(median_ci(new))})")
    return "\n".join(lines)


def fmt(m):
    return f"{m[0]:.3f} [{m[1]:.3f}, {m[2]:.3f}]"


def pct(m):
    return f"{100.0 * (m[0] - 1):+.1f} % [{100.0 * (m[1] - 1):+.1f}, {100.0 * (m[2] - 1):+.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--transports", default="tcp,rdma")
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=15)
    ap.add_argument("--json", help="also write every run's measurements here")
    ap.add_argument("--summarize", metavar="JSON", help="print the summary of an earlier --json and exit")
    ap.add_argument("--build", default=os.environ.get("NTPROF_BUILD_DIR", os.path.join(REPO, "build")))
    ap.add_argument("--baseline-ntprofd", metavar="PATH",
                    help="another build's ntprofd, run at 1 in 1 and 1 in N in every round too")
    args = ap.parse_args()
    transports = args.transports.split(",")
    if args.summarize:
        with open(args.summarize) as f:
            print(summarize(json.load(f), transports, args.rate))
        return
    ntprofctl = os.path.join(args.build, "client", "ntprofctl")
    share, devs = prepare_bed(transports)
    configs = CONFIGS
    if args.baseline_ntprofd:
        share_baseline(args.baseline_ntprofd)
        configs = CONFIGS + BASELINE_CONFIGS
    runs, total, started = [], args.rounds * len(configs) * len(transports), time.time()
    for rnd in range(args.rounds):
        for transport in transports:
            order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
            for config in order:
                run = run_config(config, transport, devs[transport], args.rate, ntprofctl, share,
                                 args.runtime)
                run["round"] = rnd
                runs.append(run)
                print(f"[{len(runs)}/{total}, {time.time() - started:.0f} s] {transport} {config}: "
                      f"{run['iops']:.0f} IOPS, block mean {run['block_us']:.0f} us, sampled mean "
                      f"{run.get('sampled_us') or 0:.0f} us", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    print(summarize(runs, transports, args.rate))


if __name__ == "__main__":
    main()
