#!/usr/bin/env python3
"""agent_idle.py - what an always-on agent costs when no I/O runs: its own CPU per second.

An agent keeps working between commands: each interval (1 s, as the service runs) it drains the
ring buffer, reads the devices' counters and its losses, writes a batch, and looks after the
devices and ports it watches. That cost does not scale with I/O, so at low IOPS it is most of what
the agent adds, and the per-I/O benchmark (agent_overhead.py) cannot tell it apart from the noise
of emulation. Here each VM of the test bed runs ntprofd with no I/O at all, and the agent's threads'
CPU time (/proc/PID/task/*/schedstat) is read over a fixed span.

Alternates this build and, with --baseline-ntprofd, another build's agent, round after round, per
transport, and prints per role the median CPU per second of each and their ratio.

  agent_idle.py [--transports tcp,rdma] [--rounds 3] [--seconds 15] [--rate 100]
                [--baseline-ntprofd PATH [--baseline-label NAME]] [--insns [--settle 45]]

--insns: instead of the agents' CPU time, both VMs' instructions per second with the agents
recording, less the same span without agents just before (a bed booted with --insn-count, where
the count is exact). It includes what the agent makes the kernel do: its system calls, sysfs reads,
wakeups and scheduling. Each agent gets --settle seconds after its start first, and a window should
hold at least two of its 30 s device rescans (--seconds 60). At the bed's 800-2,300 reads a second,
each instruction an agent spends per second costs about 1/1,000 of one per I/O in
insn_overhead.py's figures (docs/overhead.md, "The agent's rescan").

Needs a running test bed (deploy/testbed/tb up --transport tcp,rdma).
"""
import argparse
import statistics
import sys
import time

import agent_overhead as bed
import insn_overhead as insn

THIS = "this build"


def agent_cpu_ms_per_s(config, transport, dev, seconds):
    """Both VMs' agents of config ("100", "baseline 100": agent_overhead.py's configurations)
    recording with no I/O: each one's CPU ms per second over `seconds`."""
    bed.start(config, transport, dev, None)
    before = {r: bed.snap(r)["agent_ns"] for r in bed.ROLES}
    time.sleep(seconds)
    after = {r: bed.snap(r)["agent_ns"] for r in bed.ROLES}
    for role in bed.ROLES:
        bed.guest(role, "stop")
    return {r: (after[r] - before[r]) / 1e6 / seconds for r in bed.ROLES}


def insns_per_s(seconds):
    """Both VMs' instructions per second over the next `seconds`."""
    before, t0 = {r: insn.insns(r) for r in bed.ROLES}, time.monotonic()
    time.sleep(seconds)
    after, took = {r: insn.insns(r) for r in bed.ROLES}, time.monotonic() - t0
    return {r: (after[r] - before[r]) / took for r in bed.ROLES}


def agent_insns_per_s(config, transport, dev, seconds, settle):
    """What both VMs' agents of config add per second with no I/O, in guest instructions: a span
    with them recording less a span without them just before."""
    without = insns_per_s(seconds)
    bed.start(config, transport, dev, None)
    time.sleep(settle)
    with_agents = insns_per_s(seconds)
    for role in bed.ROLES:
        bed.guest(role, "stop")
    return {r: with_agents[r] - without[r] for r in bed.ROLES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--transports", default="tcp,rdma")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--baseline-ntprofd", metavar="PATH", help="also run another build's agent")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--insns", action="store_true",
                    help="guest instructions per second added (an --insn-count bed), not CPU time")
    ap.add_argument("--settle", type=float, default=45,
                    help="with --insns: seconds after an agent's start before its window")
    args = ap.parse_args()
    unit = "instructions" if args.insns else "ms CPU"
    if args.insns:
        bed.require_insn_count("agent_idle.py --insns", args.transports)
    _, devs = bed.prepare_bed(args.transports.split(","))
    builds = {THIS: str(args.rate)}
    if args.baseline_ntprofd:
        bed.share_baseline(args.baseline_ntprofd)
        builds[args.baseline_label] = f"baseline {args.rate}"
    results = {}  # (transport, build, role) -> [ms per s]
    for rnd in range(args.rounds):
        for transport in args.transports.split(","):
            order = list(builds) if rnd % 2 == 0 else list(reversed(builds))
            for name in order:
                got = (agent_insns_per_s(builds[name], transport, devs[transport], args.seconds,
                                         args.settle) if args.insns else
                       agent_cpu_ms_per_s(builds[name], transport, devs[transport], args.seconds))
                for role, ms in got.items():
                    results.setdefault((transport, name, role), []).append(ms)
                print(f"[round {rnd + 1}] {transport} {name}: host {got['host']:.2f}, target "
                      f"{got['target']:.2f} {unit} per s", file=sys.stderr)
    what = "guest instructions added" if args.insns else "agent CPU"
    per = "/s" if args.insns else " ms/s"
    print(f"\n== {what} per second with no I/O (1 in {args.rate}, 1 s intervals; median of "
          f"{args.rounds} runs of {args.seconds:g} s) ==")
    for transport in args.transports.split(","):
        for role in bed.ROLES:
            this = statistics.median(results[(transport, THIS, role)])
            line = f"  {transport:5} {role:7} this build {this:9.2f}{per}"
            if args.baseline_ntprofd:
                base = statistics.median(results[(transport, args.baseline_label, role)])
                line += (f"   {args.baseline_label} {base:9.2f}{per}   ratio "
                         f"{base / this if this else float('inf'):.1f}x")
            print(line)


if __name__ == "__main__":
    main()
