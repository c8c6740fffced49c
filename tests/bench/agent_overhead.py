#!/usr/bin/env python3
"""What recording costs the workload, measured where the cost is spent.

Runs fio (4 KiB random reads) on the test bed's NVMe-oF namespace with no agent and with ntprofd
recording on both the host and the target at each sampling rate (0 = every hook attached, nothing
sampled; 100; 1), in alternating order round after round, at each queue depth and over each
transport. Two more configurations run in the same rounds when asked:

  --floor                  programs that do nothing (tests/bench/empty_hooks) attached at exactly
                           the points the agent attaches in each VM: what any program there costs,
                           the floor under the agent's hooks (per hook, "above floor" is what the
                           agent's own code adds);
  --baseline-ntprofd PATH  another build's agent (an earlier commit's, say) at --baseline-rate, so
                           a change's before and after are measured in the same rounds of the same
                           bed despite the guests' drift.

Prints, per transport and QD:

  * IOPS with agents / without: the median of each round's paired ratio, with a bootstrap 95 %
    confidence interval (under emulation IOPS swing up to 2x between identical runs; pairing
    runs next to each other and taking medians is what makes a ratio readable);
  * each VM's CPU time per I/O (guest /proc/stat) with agents / without;
  * the BPF programs' own run time per I/O (kernel.bpf_stats_enabled) as a share of the VM's CPU
    per I/O without agents: the figure that resolves 1 %;
  * the agent process's CPU per I/O (user + sys; the agents record with 1 s intervals, as the
    service does, so their per-interval work is in it; agent_idle.py measures that work alone);
  * the sampled-command penalty: the end to end of the sampled commands that started during a run
    (from the recording) against the mean of all reads of that run (the block layer's own
    accounting), at 1 in N relative to 1 in 1 in the same round, with its interval; and the
    sampled path's own BPF run time per sampled command (1 in 1 - hooks only, both sides) against
    the end to end without agents: the same quantity without the noise of a few sampled commands
    per run, measured hot (at 1 in N the path runs colder);
and, per role, rate and hook: runs per I/O, ns per run, ns per I/O.

  agent_overhead.py [--transports tcp,rdma] [--qd 1,16] [--rates 0,100,1] [--rounds 5]
                    [--runtime 5] [--warmup 3] [--json FILE] [--floor] [--baseline-ntprofd PATH
                    [--baseline-rate 100] [--baseline-label NAME]]

Needs a running test bed (deploy/testbed/tb up --transport tcp,rdma) and a built ntprofctl.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TB = os.path.join(REPO, "deploy", "testbed", "tb")
GUEST = "/mnt/host/bin/overhead_guest.sh"
ROLES = ("host", "target")
BASELINE_IN_GUEST = "/mnt/host/bin/ntprofd-baseline"
MAX_COMMANDS = 100000  # sampled commands read back from one recording (ntprofctl --slowest's cap)
OFF, FLOOR = "off", "floor"  # configuration keys; the others are "<rate>" and "baseline <rate>"


def tb(*args, stdin=None):
    r = subprocess.run([TB, *args], capture_output=True, text=True, input=stdin)
    if r.returncode != 0:
        raise RuntimeError(f"tb {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def guest(role, *args):
    return tb("ssh", role, GUEST + " " + " ".join(str(a) for a in args))


def snap(role):
    return json.loads(guest(role, "snap").strip().splitlines()[-1])


def bpf_runs(before, after):
    """Runs and ns per program of the agent between two snapshots, by program name."""
    def ours(s):
        return {p["id"]: p for p in s["progs"] if "run_cnt" in p}
    b, a = ours(before), ours(after)
    runs = {}
    for pid_, p in a.items():
        q = b.get(pid_, {"run_cnt": 0, "run_time_ns": 0})
        cnt = p["run_cnt"] - q["run_cnt"]
        ns = p["run_time_ns"] - q["run_time_ns"]
        if cnt:
            name = p.get("name", str(pid_))
            c0, n0 = runs.get(name, (0, 0))
            runs[name] = (c0 + cnt, n0 + ns)
    return runs


def report_json(ntprofctl, path, *options):
    """(`ntprofctl report PATH -o json OPTIONS` as a dict, None) or, when it fails, (None, why)."""
    r = subprocess.run([ntprofctl, "report", path, "-o", "json", *options], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout), None


def sampled_commands(ntprofctl, path):
    """(start on the recording VM's wall clock in ns, end to end in us) of every sampled command
    of a host recording."""
    report, why = report_json(ntprofctl, path, "--slowest", str(MAX_COMMANDS))
    if report is None:
        raise RuntimeError(f"ntprofctl report {path} failed: {why}")
    held = report["records"]["host"]
    if held > MAX_COMMANDS:
        print(f"warning: {path} holds {held} records; the penalty uses the "
              f"{MAX_COMMANDS} slowest", file=sys.stderr)
    return [(c["start_wall_ns"], c["latency_us"]) for c in report["slowest"]]


def window_mean_us(commands, run):
    """Mean end to end of the sampled commands that started during run's fio (None: none did)."""
    inside = [us for start, us in commands if run["wall_start_ns"] <= start < run["wall_end_ns"]]
    return statistics.fmean(inside) if inside else None


def end_to_end_mean_us(ntprofctl, path):
    """Mean end to end of the sampled commands in a host recording (None without any)."""
    report, _ = report_json(ntprofctl, path)
    if report is None:
        return None
    groups = report["groups"]
    n = sum(g["latency"]["n"] for g in groups)
    return sum(g["latency"]["mean_us"] * g["latency"]["n"] for g in groups) / n if n else None


def config_rate(config):
    """The sampling rate of an agent configuration ("100", "baseline 100"); None otherwise."""
    return int(config.split()[-1]) if config not in (OFF, FLOOR) else None


def measure(args, transport, dev, qd, config):
    """One fio run with the VMs as they are (config OFF: nothing of ours running)."""
    watched = config != OFF
    before = {r: snap(r) for r in ROLES} if watched else None
    fio = json.loads(guest("host", "fio", dev, qd, args.runtime).strip().splitlines()[-1])
    after = {r: snap(r) for r in ROLES} if watched else None
    run = {"transport": transport, "qd": qd, "config": config, "rate": config_rate(config),
           "iops": fio["iops"], "ios": fio["ios"], "block_reads": fio["block_reads"],
           "block_read_ms": fio["block_read_ms"], "wall_start_ns": fio["wall_start_ns"],
           "wall_end_ns": fio["wall_end_ns"]}
    for r in ROLES:
        run[f"{r}_cpu_ns_per_io"] = int(guest(r, "cpu-per-io").strip().splitlines()[-1])
        if watched:
            run[f"{r}_agent_ns"] = after[r]["agent_ns"] - before[r]["agent_ns"]
            run[f"{r}_bpf"] = bpf_runs(before[r], after[r])
    return run


def start(config, transport, dev, hook_names):
    """Starts what config runs in both VMs: agents (this build's or the baseline's at its rate),
    or the empty programs at the points the agent attaches there."""
    for role in ("target", "host"):
        if config == FLOOR:
            guest(role, "start-empty", *hook_names[transport][role])
            continue
        binary = BASELINE_IN_GUEST if config.startswith("baseline") else "/mnt/host/bin/ntprofd"
        device = os.path.basename(dev) if role == "host" else "-"
        guest(role, "start", role, transport, config_rate(config), device, 12345, binary)


def configuration(args, transport, dev, config, share, ntprofctl, hook_names):
    """The runs of every QD in one configuration, in one agent session."""
    if config != OFF:
        start(config, transport, dev, hook_names)
    try:
        if args.warmup:
            # An always-on agent is measured warm: the first seconds after a start cost its
            # sampled path more (maps and slots touched for the first time). Every configuration,
            # the one without agents too, gets the same unmeasured run.
            guest("host", "fio", dev, args.qd[-1], args.warmup)
        runs = [measure(args, transport, dev, qd, config) for qd in args.qd]
    finally:
        if config != OFF:
            guest("host", "stop")
            guest("target", "stop")
    if config_rate(config):
        # One recording covers the warm-up and every QD: each run's sampled commands are the ones
        # that started inside its fio, against all reads of that run.
        tb("ssh", "host", "cp /tmp/ntprof-overhead/agent.ntp /mnt/host/out/overhead-host.ntp")
        commands = sampled_commands(ntprofctl, os.path.join(share, "out", "overhead-host.ntp"))
        for r in runs:
            e2e = window_mean_us(commands, r)
            block_us = 1000.0 * r["block_read_ms"] / r["block_reads"] if r["block_reads"] else None
            r["sampled_vs_all"] = e2e / block_us if e2e and block_us else None
    return runs


def tb_env():
    """The running bed's settings (`tb env`), their values unquoted."""
    pairs = (line.split("=", 1) for line in tb("env").split() if "=" in line)
    return {k: v.strip("'\"") for k, v in pairs}


def require_insn_count(who, transports):
    """Exits, saying how to boot one, unless the running bed counts instructions (--insn-count)."""
    if tb_env().get("NTPROF_TB_INSN_COUNT") != "1":
        sys.exit(f"{who}: the bed counts no instructions: deploy/testbed/tb down; "
                 f"deploy/testbed/tb up --insn-count --transport {transports}")


def prepare_bed(transports, build=None):
    """The running bed's share folder and the host's device per transport, with the guest half of
    the benchmarks and this build's agent copied in (the bed keeps the binaries of its `up`, which
    may be older than the build) and no agent left from an earlier, interrupted run. build: the
    build folder (default: $NTPROF_BUILD_DIR, else the repository's build/)."""
    build = build or os.environ.get("NTPROF_BUILD_DIR", os.path.join(REPO, "build"))
    share = tb_env().get("NTPROF_TB_SHARE", "")
    tb("share", os.path.join(REPO, "tests", "bench", "overhead_guest.sh"),
       os.path.join(build, "daemon", "ntprofd"), os.path.join(build, "client", "ntprofctl"))
    for role in ROLES:
        guest(role, "stop")
    return share, {t: tb("dev", "--transport", t).strip() for t in transports}


def share_baseline(path):
    """Copies another build's ntprofd into the bed's share, as BASELINE_IN_GUEST."""
    with tempfile.TemporaryDirectory() as d:  # tb share keeps the file's own name
        shutil.copy(path, os.path.join(d, os.path.basename(BASELINE_IN_GUEST)))
        tb("share", os.path.join(d, os.path.basename(BASELINE_IN_GUEST)))


def agent_hook_names(transports, devs):
    """The programs this build's agent attaches in each VM, per transport and role (an agent at
    rate 0 started and stopped once): where the floor's empty programs go."""
    names = {}
    for transport in transports:
        start("0", transport, devs[transport], None)
        try:
            names[transport] = {role: sorted(p["name"] for p in snap(role)["progs"])
                                for role in ROLES}
        finally:
            guest("host", "stop")
            guest("target", "stop")
    return names


def median_ci(values, resamples=4000):
    """Median and a bootstrap 95 % confidence interval of the median."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return statistics.median(values), meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def config_name(config, baseline_label="baseline"):
    if config == FLOOR:
        return "floor (empty progs)"
    rate = config_rate(config)
    name = {None: "off", 0: "hooks only (rate 0)", 1: "1 in 1"}.get(rate, f"1 in {rate}")
    return f"{baseline_label}, {name}" if config.startswith("baseline") else name


def config_of(run):
    """A run's configuration key (runs of older --json files have only their rate)."""
    if "config" in run:
        return run["config"]
    return OFF if run["rate"] is None else str(run["rate"])


def agent_configs(args):
    """The configurations with something of ours running, in the order the tables show them."""
    configs = [FLOOR] if args.floor else []
    configs += [str(r) for r in args.rates]
    if args.baseline_ntprofd:
        configs.append(f"baseline {args.baseline_rate}")
    return configs


def per_hook(sel, role):
    """Per program of role over the runs sel: (runs per I/O, ns per run, ns per I/O) medians."""
    names = sorted({n for r in sel for n in r[f"{role}_bpf"]})
    table = {}
    for n in names:
        per_io = [r[f"{role}_bpf"].get(n, (0, 0)) for r in sel]
        table[n] = (statistics.median(c / r["ios"] for (c, _), r in zip(per_io, sel)),
                    statistics.median(ns / c for c, ns in per_io if c) if any(c for c, _ in per_io)
                    else 0.0,
                    statistics.median(ns / r["ios"] for (_, ns), r in zip(per_io, sel)))
    return table


def say_penalty(say, by_round, configs, name):
    """The sampled-command penalty of one transport and QD: per round, a sampled command's end to
    end over the mean of all reads at a rate, divided by that ratio at 1 in 1 in the same round
    (where both are the same commands: what the two accountings disagree by)."""
    for config in configs:
        if config_rate(config) in (None, 0, 1):
            continue
        pens = [rr[config]["sampled_vs_all"] / rr["1"]["sampled_vs_all"] - 1.0
                for rr in by_round.values()
                if config in rr and "1" in rr and rr[config].get("sampled_vs_all")
                and rr["1"].get("sampled_vs_all")]
        if pens:
            med, lo, hi = (100.0 * v for v in median_ci(pens))
            say(f"  a sampled command at {name(config)} takes {med:+.1f} % [{lo:+.1f}, {hi:+.1f}] "
                f"longer than the mean of all reads, against 1 in 1 (block-layer accounting; "
                f"{len(pens)} rounds)")


def bpf_ns_per_io(run, roles=ROLES):
    """The BPF run time per I/O of one run, over the programs of roles (both sides by default)."""
    return sum(ns for role in roles for _, ns in run[f"{role}_bpf"].values()) / run["ios"]


def say_sampled_path(say, by_round):
    """What the sampled path itself runs, per sampled command: both sides' BPF per I/O at 1 in 1
    (every command sampled) minus with hooks only (none), per round, against the mean end to end
    of the round's run without agents (block-layer accounting). The same quantity as the penalty
    without its noise: the programs' extra run time on the command's own path. At 1 in N the path
    runs colder, so this is its least."""
    extra = [(bpf_ns_per_io(rr["1"]) - bpf_ns_per_io(rr["0"]),
              1e6 * rr[OFF]["block_read_ms"] / rr[OFF]["block_reads"])
             for rr in by_round.values() if all(k in rr for k in ("0", "1", OFF))]
    if not extra:
        return
    us = median_ci([ns / 1000.0 for ns, _ in extra])
    pct = median_ci([100.0 * ns / e2e for ns, e2e in extra])
    say(f"  the sampled path's own BPF run time (1 in 1 - hooks only, both sides): {us[0]:.1f} us "
        f"[{us[1]:.1f}, {us[2]:.1f}] per sampled command, {pct[0]:.2f} % [{pct[1]:.2f}, "
        f"{pct[2]:.2f}] of the mean end to end without agents ({len(extra)} rounds)")


def summarize(runs, args):
    lines = []
    say = lines.append
    configs = agent_configs(args)
    name = lambda c: config_name(c, args.baseline_label)
    for transport in args.transports:
        for qd in args.qd:
            sel = [r for r in runs if r["transport"] == transport and r["qd"] == qd]
            if not sel:
                continue
            say(f"\n== NVMe/{transport.upper()}, 4 KiB random reads, QD{qd} "
                f"({args.rounds} rounds of {args.runtime} s runs, alternating) ==")
            by_round = {}
            for r in sel:
                by_round.setdefault(r["round"], {})[config_of(r)] = r
            offs = [r for r in sel if config_of(r) == OFF]
            off_cpu = {role: statistics.median(r[f"{role}_cpu_ns_per_io"] for r in offs)
                       for role in ROLES}
            say(f"  without agents: median {statistics.median(r['iops'] for r in offs):.0f} IOPS; "
                f"CPU per I/O: host {off_cpu['host'] / 1000:.1f} us, "
                f"target {off_cpu['target'] / 1000:.1f} us")
            say(f"  {'agents':<30} {'IOPS ratio [95% CI]':>26} {'host CPU/IO':>12} "
                f"{'target CPU/IO':>14} {'BPF ns/IO host':>15} {'target':>8} "
                f"{'BPF % of CPU/IO':>16} {'agent ns/IO':>12}")
            for config in configs:
                pairs = [rr for rr in by_round.values() if OFF in rr and config in rr]
                if not pairs:
                    continue
                iops = median_ci([p[config]["iops"] / p[OFF]["iops"] for p in pairs])
                cpu = {role: statistics.median(
                    p[config][f"{role}_cpu_ns_per_io"] / p[OFF][f"{role}_cpu_ns_per_io"]
                    for p in pairs) for role in ROLES}
                ons = [p[config] for p in pairs]
                bpf = {role: statistics.median(bpf_ns_per_io(r, (role,)) for r in ons)
                       for role in ROLES}
                share = {role: 100.0 * bpf[role] / off_cpu[role] for role in ROLES}
                agent = statistics.median(
                    sum(r[f"{role}_agent_ns"] for role in ROLES) / r["ios"] for r in ons)
                # the agents' own process time is part of the VMs' CPU: shown apart as well
                say(f"  {name(config):<30} {iops[0]:>7.3f} [{iops[1]:.3f}, {iops[2]:.3f}]"
                    f"{'':>6} {cpu['host']:>11.3f}x {cpu['target']:>13.3f}x "
                    f"{bpf['host']:>15.0f} {bpf['target']:>8.0f} "
                    f"{share['host']:>7.2f} / {share['target']:<6.2f} {agent:>12.0f}")
            say_penalty(say, by_round, configs, name)
            say_sampled_path(say, by_round)
    say("\n== per hook (median over the runs of every QD; ns as the kernel's bpf_stats count them;"
        " above floor: ns/run over the empty program's at that point) ==")
    for transport in args.transports:
        for role in ROLES:
            floor = per_hook([r for r in runs if r["transport"] == transport and
                              config_of(r) == FLOOR], role)
            for config in configs:
                sel = [r for r in runs if r["transport"] == transport and config_of(r) == config]
                if not sel:
                    continue
                say(f"  {transport} {role}, {name(config)}:")
                total = 0.0
                for n, (runs_io, ns_run, ns_io) in per_hook(sel, role).items():
                    total += ns_io
                    above = (f"{ns_run - floor[n][1]:>+8.0f} above floor"
                             if n in floor and config != FLOOR else "")
                    say(f"    {n:<34} {runs_io:>6.2f} runs/IO {ns_run:>8.0f} ns/run "
                        f"{ns_io:>8.0f} ns/IO {above}")
                say(f"    {'all hooks':<34} {'':>14} {'':>15} {total:>8.0f} ns/IO")
    return "\n".join(lines)


def add_matrix_arguments(ap, rounds):
    """The arguments of what the overhead benchmarks run: transports, QDs, rates, rounds and the
    baseline build (insn_overhead.py takes them too)."""
    ap.add_argument("--transports", default="tcp,rdma")
    ap.add_argument("--qd", default="1,16")
    ap.add_argument("--rates", default="0,100,1")
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--baseline-ntprofd", metavar="PATH",
                    help="also run another build's agent, at --baseline-rate")
    ap.add_argument("--baseline-rate", type=int, default=100)
    ap.add_argument("--baseline-label", default="baseline",
                    help="what the tables call the baseline build (a commit, say)")


def parse_matrix(args):
    args.transports = args.transports.split(",")
    args.qd = [int(q) for q in args.qd.split(",")]
    args.rates = [int(r) for r in args.rates.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_matrix_arguments(ap, rounds=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3,
                    help="seconds of unmeasured reads after each start (0: none)")
    ap.add_argument("--floor", action="store_true",
                    help="also run empty programs at the agent's attach points (the floor)")
    ap.add_argument("--json", help="also write every run's measurements here")
    ap.add_argument("--summarize", metavar="JSON",
                    help="print the summary of an earlier run's --json file and exit (give the "
                         "same --floor / --baseline-* flags to see those rows)")
    ap.add_argument("--build", default=os.environ.get("NTPROF_BUILD_DIR",
                                                      os.path.join(REPO, "build")))
    args = ap.parse_args()
    parse_matrix(args)
    if args.summarize:
        with open(args.summarize) as f:
            runs = json.load(f)
        for r in runs:  # JSON turned the per-hook tuples into lists
            for role in ROLES:
                if f"{role}_bpf" in r:
                    r[f"{role}_bpf"] = {k: tuple(v) for k, v in r[f"{role}_bpf"].items()}
        print(summarize(runs, args))
        return
    ntprofctl = os.path.join(args.build, "client", "ntprofctl")
    share, devs = prepare_bed(args.transports, args.build)
    if args.floor:
        tb("share", os.path.join(args.build, "tests", "empty_hooks"))
    if args.baseline_ntprofd:
        share_baseline(args.baseline_ntprofd)
    hook_names = agent_hook_names(args.transports, devs) if args.floor else None
    for role in ROLES:
        guest(role, "cpu-log")
    configs = [OFF] + agent_configs(args)
    runs = []
    total = args.rounds * len(configs) * len(args.qd) * len(args.transports)
    started = time.time()
    for rnd in range(args.rounds):
        for transport in args.transports:
            shift = rnd % len(configs)  # rotate the order so no configuration always runs first
            for config in configs[shift:] + configs[:shift]:
                for run in configuration(args, transport, devs[transport], config, share, ntprofctl,
                                         hook_names):
                    run["round"] = rnd
                    runs.append(run)
                    print(f"[{len(runs)}/{total}, {time.time() - started:.0f} s] {transport} "
                          f"QD{run['qd']} {config_name(config, args.baseline_label)}: "
                          f"{run['iops']:.0f} IOPS, CPU per I/O "
                          f"host {run['host_cpu_ns_per_io'] / 1000:.0f} us, target "
                          f"{run['target_cpu_ns_per_io'] / 1000:.0f} us", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    print(summarize(runs, args))


if __name__ == "__main__":
    main()
