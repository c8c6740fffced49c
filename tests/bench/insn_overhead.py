#!/usr/bin/env python3
"""What recording costs the workload, in guest instructions per I/O: an exact, load-proof figure.

Needs a bed booted with instruction counting (deploy/testbed/tb up --insn-count --transport
tcp,rdma): each VM's emulator counts every instruction the guest runs, the guests' clocks follow
their instruction counts (-icount) and idle guests halt. Then the same work costs the same
instructions whatever the build machine's load, where IOPS and CPU time under emulation swing by
tens of percent.

Per transport and queue depth, in alternating rounds (the order rotates), with no agent and with
ntprofd recording on both the host and the target at each rate (0 = every hook attached, nothing
sampled; 100; 1): fio reads 4 KiB blocks on the host VM without end, and the counts are taken in a
window inside that one run. At each edge of the window fio is stopped (SIGSTOP), the reads it had
in flight complete, and both VMs' counts and the device's completed reads are taken while the VMs
idle; then fio goes on. fio's start-up, the ssh that runs it and fio's exit stay outside:

    instructions per I/O = (count at the window's end - count at its start) / reads in between

The window is sized in reads (--ios) from the rate fio ran at during its warm-up (--warmup-ios).

Prints, per role: instructions per I/O without agents and with them, the ratio with agents /
without (median of the rounds' paired ratios, bootstrap 95 % interval) and the added instructions
per I/O. Under it, "at equal batching": the added instructions per I/O with the kernel's batching
held equal (batching_adjust.py: a fit over every window of the role, with the data link's packets
and interrupts and the timer's interrupts per I/O, counted at the same edges). At QD16 the
batching, which follows the two VMs' relative speed under emulation, moves a window's count by
2-3 %; the paired medians cannot resolve 0.5 % through it, the fit can (docs/overhead.md,
"Resolving the whole count"). --windows K counts K windows one after the other in each
configuration's fio run: the agent's start-up (a minute or more under emulation) serves K windows.
With --split, also where the added instructions go: each VM's per-block counts before
and after the window, mapped to the guest's /proc/kallsyms (BPF programs, BPF trampolines,
the kernel functions that differ most, user space), with agents minus without in the same round.

  insn_overhead.py [--transports tcp,rdma] [--qd 1,16] [--rates 0,100,1] [--rounds 3]
                   [--ios 5000] [--warmup-ios 500] [--windows 1] [--split] [--json FILE]
                   [--summarize JSON]
                   [--baseline-ntprofd PATH [--baseline-rate 100] [--baseline-label NAME]]
                   [--max-added ROLE=N ...]

--max-added host=N target=N: exit 1 when, at any rate, a role's added instructions per I/O (the
median) exceed N; --max-hooks host=N target=N (with --split): the same for the instructions in
BPF programs, trampolines, BPF's run-time and the tracepoints' call sites only, the steady part
(the regression check, tests/bench/insn_overhead_check.sh).
"""
import argparse
import bisect
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import agent_overhead as ao
import batching_adjust as ba

OFF = ao.OFF
ROLES = ao.ROLES
SETTLE_S = 0.2  # after an ssh call returns, its session's teardown in the VM runs a moment longer


def insns(role, profile=None):
    """The instructions role's VM has run since boot (and its per-block profile into profile)."""
    args = ["insns", role] + (["--profile", profile] if profile else [])
    return int(ao.tb(*args).strip().splitlines()[-1])


def counts(profiles=None):
    """{role: the instructions its VM has run}, once the VMs idle (the plugin rewrites its count
    every few ms). profiles: {role: path} to keep each VM's per-block counts too."""
    time.sleep(SETTLE_S)
    return {r: insns(r, profiles[r] if profiles else None) for r in ROLES}


class FioWindow:
    """fio reading on the host VM until closed, stopped at will (overhead_guest.sh fio-window):
    the window's edges are taken while it is stopped, from one open ssh session."""

    def __init__(self, dev, qd):
        self.proc = subprocess.Popen([ao.TB, "ssh", "host", f"{ao.GUEST} fio-window {dev} {qd}"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._expect("ready")

    def _expect(self, what=None):
        line = self.proc.stdout.readline().strip()
        if not line or (what and line != what):
            raise RuntimeError(f"fio-window on the host: expected {what or 'a count'}, got "
                               f"'{line}' (exit {self.proc.poll()})")
        return line

    def _say(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def pause(self):
        """Stops fio; returns the reads the device has completed, once none is in flight."""
        self._say("pause")
        return int(self._expect())

    def resume(self):
        self._say("resume")
        self._expect("resumed")

    def run_for(self, seconds):
        """Lets fio go on this long, stops it again; returns the device's completed reads."""
        self.resume()
        time.sleep(seconds)
        return self.pause()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self._say("stop")
            self.proc.stdin.close()
        except OSError:
            pass  # the session is gone already; so is fio (its stdin closed)
        self.proc.wait(timeout=60)


def batching(role):
    """role's VM so far: its data link's packets and interrupts, its timer's interrupts."""
    values = [int(v) for v in ao.guest(role, "nic-stats").split()[-len(ba.BATCHING):]]
    return dict(zip(ba.BATCHING, values))


def counted_windows(dev, qd, ios, warmup_ios, windows=1, profiles=None):
    """Counts `windows` consecutive windows of about `ios` reads inside one fio run on the host
    VM, after `warmup_ios` (0: none); yields, per window, (reads completed in it, {role:
    instructions its VM ran in it}, {role: {batching figure: its count in it}}). profiles: {role:
    (before_path, after_path)} to keep each VM's per-block counts at the edges (rewritten each
    window: read them before taking the next). The batching figures are read over ssh outside the
    instruction counts (before the first count of a window, after its last)."""
    with FioWindow(dev, qd) as fio:
        reads = fio.pause()
        started = time.time()
        done = fio.run_for(PROBE_S)
        rate = max(done - reads, 1) / (time.time() - started)  # reads per second
        if warmup_ios:
            # an always-on agent is measured warm; every configuration gets the same reads
            done = fio.run_for(warmup_ios / rate)
        for _ in range(windows):
            nic_before = {r: batching(r) for r in ROLES}
            before = counts({r: p[0] for r, p in profiles.items()} if profiles else None)
            last = fio.run_for(ios / rate)
            after = counts({r: p[1] for r, p in profiles.items()} if profiles else None)
            nic_after = {r: batching(r) for r in ROLES}
            yield (last - done, {r: after[r] - before[r] for r in ROLES},
                   {r: {k: nic_after[r][k] - nic_before[r][k] for k in ba.BATCHING}
                    for r in ROLES})
            done = last


# ---- where instructions go: per-block counts against the guest's symbols -----------------------
class Symbols:
    """A VM's text symbols (kernel, modules, BPF programs and trampolines), by start address."""

    def __init__(self, kallsyms_text):
        syms = []
        for line in kallsyms_text.splitlines():
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr:
                syms.append((addr, parts[2]))
        syms.sort()
        self.starts = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def name(self, vaddr):
        i = bisect.bisect_right(self.starts, vaddr) - 1
        return self.names[i] if i >= 0 else "?"


def kallsyms(role, only_bpf=False):
    cmd = "grep -E '\\[bpf\\]$' /proc/kallsyms" if only_bpf else "cat /proc/kallsyms"
    return ao.tb("ssh", role, cmd)


def read_profile(path):
    """(total, user-space instructions, {block start: instructions}) of a plugin profile."""
    with open(path) as f:
        total = int(f.readline())
        user = int(f.readline().split()[1])
        blocks = {}
        for line in f:
            a, n = line.split()
            blocks[int(a, 16)] = int(n)
    return total, user, blocks


def by_symbol(before_path, after_path, symbols):
    """Instructions run between two profiles, by symbol ("user space" for all of user space)."""
    _, user0, b0 = read_profile(before_path)
    _, user1, b1 = read_profile(after_path)
    out = {"user space": user1 - user0}
    for addr, n in b1.items():
        d = n - b0.get(addr, 0)
        if d:
            name = symbols.name(addr)
            out[name] = out.get(name, 0) + d
    return out


# Kernel functions only the bpf() system call runs: the agent's own calls (reading the loss
# counters, the watched-device table, polling the ring), not any hook's. Their names look like
# BPF's run-time, so they are told apart first.
AGENT_BPF_SYSCALL = ("__x64_sys_bpf", "__sys_bpf", "__se_sys_bpf", "map_lookup_elem",
                     "map_update_elem", "map_delete_elem", "map_get_next_key", "bpf_map_copy_value",
                     "generic_map_", "bpf_map_value_size", "bpf_check_uarg_tail_zero",
                     "bpf_percpu_array_copy", "bpf_percpu_hash_copy", "htab_map_get_next_key",
                     "htab_lru_map_get_next_key", "array_map_get_next_key", "bpf_map_get",
                     "__bpf_map_get", "bpf_map_put", "__bpf_map_put", "bpf_map_inc", "bpf_obj_",
                     "bpf_map_write_active", "bpf_map_new_fd", "bpf_prog_get", "bpf_link_get",
                     "ringbuf_map_poll", "bpf_map_poll", "bpf_map_mmap", "ringbuf_map_mmap",
                     "bpf_map_fd", "bpf_stats_handler", "bpf_ringbuf_query",
                     # kernel functions, not programs: bpf_prog_get_info_by_fd (the agent's
                     # recursion-miss count each interval), bpf_prog_get_stats, ...
                     "bpf_prog_get", "bpf_prog_put", "bpf_prog_inc", "bpf_prog_new_fd")
# A loaded program's symbol: bpf_prog_<its 16-hex-digit tag>[_<its name>]
BPF_PROGRAM = re.compile(r"bpf_prog_[0-9a-f]{16}(_|$)")
AGENT_KERNEL = "agent's bpf() calls in the kernel"
# What BPF's run-time calls around every program run: a trampoline's __bpf_prog_enter/exit and a
# tracepoint's bpf_trace_run take an RCU read lock and pin the task to its CPU. Other kernel code
# calls them too, but what they add with agents (with minus without) is the programs' brackets.
BPF_RUN_BRACKET = ("migrate_enable", "migrate_disable", "__rcu_read_lock", "__rcu_read_unlock",
                   "update_prog_stats",
                   # the bodies of the helpers the programs call: bpf_probe_read_kernel's copy
                   # and its address check, bpf_ktime_get_ns's clock
                   "copy_from_kernel_nofault", "copy_from_kernel_nofault_allowed",
                   "ktime_get_mono_fast_ns")
TRACEPOINT_SITES = "tracepoint call sites"
# The functions that fire the tracepoints the agents attach to (block_rq_issue, block_rq_complete,
# block_bio_queue, nvme_setup_cmd, nvmet_req_init, nvmet_req_complete, net_dev_queue). An attached
# tracepoint's dispatch runs inline there: its static key's branch is taken, preemption goes off
# and on, the arguments are set up for the static call (about 13-15 instructions a run; without a
# program the site is a jump over it). What these functions add with agents is that dispatch (plus,
# for those that run a varying number of times per I/O, the batching's noise).
TRACEPOINT_CALLERS = frozenset(("blk_mq_start_request", "blk_update_request",
                                "submit_bio_noacct_nocheck", "nvme_setup_cmd", "nvmet_req_init",
                                "__nvmet_req_complete", "__dev_queue_xmit"))


def kind(symbol):
    """What a symbol is, for the split: a BPF program, a trampoline, BPF's run-time in the kernel
    (program entry/exit, helpers, maps, ring buffer), a function that fires an attached tracepoint
    (its inline dispatch), the agent's own bpf() system calls, other kernel code, or user
    space."""
    if symbol == "user space":
        return "user space (agent, fio)"
    if BPF_PROGRAM.match(symbol):
        return "BPF programs"
    if symbol.startswith(("bpf_trampoline_", "bpf_dispatcher_")):
        return "BPF trampolines"
    if symbol.startswith(AGENT_BPF_SYSCALL):
        return AGENT_KERNEL
    if symbol in BPF_RUN_BRACKET:
        return "BPF run-time in the kernel"
    if symbol in TRACEPOINT_CALLERS:
        return TRACEPOINT_SITES
    if symbol.startswith(("__bpf", "bpf_", "htab_", "__htab", "array_map", "ringbuf", "__ringbuf",
                          "__sys_bpf", "percpu_array", "pcpu_freelist", "kprobe", "trace_call_bpf",
                          "perf_trace", "bpf_trace")):
        return "BPF run-time in the kernel"
    return "other kernel (syscalls, scheduling, timers, ...)"


def program_name(symbol):
    """bpf_prog_<tag>_<name> -> <name>."""
    parts = symbol.split("_", 3)
    return parts[3] if len(parts) == 4 else symbol


# ---- the runs ------------------------------------------------------------------------------------
PROBE_S = 0.5  # fio's first run, to learn its rate (and so size the window) in this configuration


def measure(args, transport, dev, qd, config, symbols, workdir):
    """One configuration's figures at one QD: --windows windows of about --ios reads each, one
    after the other in one fio run, after --warmup-ios."""
    profiles = None
    if args.split:
        profiles = {r: (os.path.join(workdir, f"{r}.before"), os.path.join(workdir, f"{r}.after"))
                    for r in ROLES}
    runs = []
    for ios, insns, nic in counted_windows(dev, qd, args.ios, args.warmup_ios, args.windows,
                                           profiles):
        if ios < 1:
            raise RuntimeError(f"no read completed in the window ({transport} QD{qd}, {config})")
        run = {"transport": transport, "qd": qd, "config": config,
               "rate": ao.config_rate(config), "ios": ios, "window": len(runs)}
        for r in ROLES:
            run[f"{r}_insns"] = insns[r]
            run[f"{r}_per_io"] = run[f"{r}_insns"] / ios
            run[f"{r}_batching"] = {k: v / ios for k, v in nic[r].items()}
            if profiles:
                run[f"{r}_symbols"] = by_symbol(*profiles[r], symbols[r])
        runs.append(run)
    return runs


def configuration(args, transport, dev, config, base_symbols, hook_names, workdir):
    """Every QD of one configuration, in one agent session."""
    if config != OFF:
        ao.start(config, transport, dev, hook_names)
        for role in ROLES:
            # overhead_guest.sh turns on the kernel's accounting of BPF run time (two clock reads
            # per program run), which a production agent does not: counted, it was ~400 of the
            # added instructions per I/O
            ao.tb("ssh", role, "sysctl -qw kernel.bpf_stats_enabled=0")
    try:
        symbols = base_symbols
        if args.split and config != OFF:
            # BPF programs and trampolines are loaded with the agent: their addresses are new
            symbols = {r: Symbols(base_symbols[r].text + kallsyms(r, only_bpf=True)) for r in ROLES}
        return [run for qd in args.qd
                for run in measure(args, transport, dev, qd, config, symbols, workdir)]
    finally:
        if config != OFF:
            ao.guest("host", "stop")
            ao.guest("target", "stop")


class BootSymbols(Symbols):
    """The symbols of a boot (kernel and modules), keeping their text to add BPF's to later."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text


# ---- the summary ---------------------------------------------------------------------------------
def paired(sel, config):
    """[(run without agents, run with config)] for the windows (the n-th of a round) that have
    both."""
    by_round = {}
    for r in sel:
        by_round.setdefault((r["round"], r.get("window", 0)), {})[r["config"]] = r
    return [(rr[OFF], rr[config]) for rr in by_round.values() if OFF in rr and config in rr]


def figures(pairs, role):
    """Without, with (medians), ratio (median, lo, hi), added (median, lo, hi) per I/O."""
    without = statistics.median(off[f"{role}_per_io"] for off, _ in pairs)
    with_ = statistics.median(on[f"{role}_per_io"] for _, on in pairs)
    ratio = ao.median_ci([on[f"{role}_per_io"] / off[f"{role}_per_io"] for off, on in pairs])
    added = ao.median_ci([on[f"{role}_per_io"] - off[f"{role}_per_io"] for off, on in pairs])
    return without, with_, ratio, added


def split_rows(pairs, role):
    """Median added instructions per I/O, per symbol, over the pairs (with minus without)."""
    names = {n for off, on in pairs for run in (off, on) for n in run.get(f"{role}_symbols", {})}
    rows = {}
    for n in names:
        d = [on[f"{role}_symbols"].get(n, 0) / on["ios"] - off[f"{role}_symbols"].get(n, 0) / off["ios"]
             for off, on in pairs if f"{role}_symbols" in on and f"{role}_symbols" in off]
        if d:
            rows[n] = statistics.median(d)
    return rows


HOOK_KINDS = ("BPF programs", "BPF trampolines", "BPF run-time in the kernel", TRACEPOINT_SITES)


def by_kind(rows):
    kinds = {}
    for n, v in rows.items():
        kinds[kind(n)] = kinds.get(kind(n), 0.0) + v
    return kinds


def hooks_per_io(pairs, role):
    """Added instructions per I/O in the hooks themselves: programs, trampolines and BPF's
    run-time. Steadier than the whole (page zeroing elsewhere swings by thousands per I/O)."""
    kinds = by_kind(split_rows(pairs, role))
    return sum(kinds.get(k, 0.0) for k in HOOK_KINDS)


def say_split(say, pairs, role, top):
    rows = split_rows(pairs, role)
    if not rows:
        return
    kinds = by_kind(rows)
    say(f"    {role}: " + "; ".join(f"{k} {v:+.0f}" for k, v in
                                    sorted(kinds.items(), key=lambda kv: -abs(kv[1]))))
    progs = sorted(((program_name(n), v) for n, v in rows.items() if kind(n) == "BPF programs"),
                   key=lambda kv: -kv[1])
    if progs:
        say(f"      programs: " + ", ".join(f"{n} {v:.0f}" for n, v in progs))
    kernel = sorted(((n, v) for n, v in rows.items()
                     if kind(n) not in ("BPF programs", "user space (agent, fio)")),
                    key=lambda kv: -abs(kv[1]))[:top]
    if kernel:
        say(f"      kernel functions (largest differences): " +
            ", ".join(f"{n} {v:+.0f}" for n, v in kernel))


def batching_windows(sel, config, role):
    """The windows without agents and with config, as batching_adjust takes them."""
    return [(r["config"] == config, r[f"{role}_per_io"], r[f"{role}_batching"])
            for r in sel if r["config"] in (OFF, config) and f"{role}_batching" in r]


def say_equal_batching(say, sel, config, role):
    """The line under a role's figures: the added instructions per I/O at equal batching."""
    windows = batching_windows(sel, config, role)
    fit = ba.added_at_equal_batching(windows)
    if fit is None:
        if windows:
            say(f"  {'':<7} {'  at equal batching':<24} needs at least 5 windows with and without "
                f"agents in all (--rounds, --windows)")
        return
    shifts = ", ".join(f"{k} {off:.3f}->{on:.3f}" for k, (off, on) in
                       ba.batching_means(windows).items() if k in fit["used"])
    say(f"  {'':<7} {'  at equal batching':<24} {fit['without']:>9.0f} "
        f"{fit['without'] + fit['added']:>9.0f} {fit['ratio']:>8.4f} "
        f"[{fit['ratio_lo']:.4f}, {fit['ratio_hi']:.4f}] {fit['added']:>+8.0f} "
        f"[{fit['lo']:+.0f}, {fit['hi']:+.0f}]   ({fit['windows']} windows; per I/O without->with: "
        f"{shifts})")


def summarize(runs, args):
    lines = []
    say = lines.append
    configs = ao.agent_configs(args)
    name = lambda c: ao.config_name(c, args.baseline_label)
    for transport in args.transports:
        for qd in args.qd:
            sel = [r for r in runs if r["transport"] == transport and r["qd"] == qd]
            if not sel:
                continue
            ios = statistics.median(r["ios"] for r in sel)
            windows = len({r.get("window", 0) for r in sel})
            say(f"\n== NVMe/{transport.upper()}, 4 KiB random reads, QD{qd}: guest instructions "
                f"per I/O ({len({r['round'] for r in sel})} rounds of "
                f"{windows} window{'s' if windows != 1 else ''} of {ios:.0f} reads, "
                f"alternating) ==")
            say(f"  {'role':<7} {'agents':<24} {'without':>9} {'with':>9} {'ratio [95% CI]':>26} "
                f"{'added/IO [95% CI]':>24}")
            for config in configs:
                pairs = paired(sel, config)
                if not pairs:
                    continue
                for role in ROLES:
                    without, with_, ratio, added = figures(pairs, role)
                    say(f"  {role:<7} {name(config):<24} {without:>9.0f} {with_:>9.0f} "
                        f"{ratio[0]:>8.4f} [{ratio[1]:.4f}, {ratio[2]:.4f}] "
                        f"{added[0]:>+8.0f} [{added[1]:+.0f}, {added[2]:+.0f}]")
                    say_equal_batching(say, sel, config, role)
            if any(f"{role}_symbols" in r for r in sel for role in ROLES):
                say("  where the added instructions per I/O go (with - without, median of rounds):")
                for config in configs:
                    pairs = paired(sel, config)
                    if pairs:
                        say(f"   {name(config)}:")
                        for role in ROLES:
                            say_split(say, pairs, role, args.top)
    return "\n".join(lines)


def over_bound(runs, args):
    """(transport, qd, config, role, what, added, bound) for each figure over its bound: the
    added instructions per I/O (--max-added) or those in the hooks (--max-hooks)."""
    out = []
    for transport in args.transports:
        for qd in args.qd:
            sel = [r for r in runs if r["transport"] == transport and r["qd"] == qd]
            for config in ao.agent_configs(args):
                pairs = paired(sel, config)
                if not pairs:
                    continue
                for role, bound in args.max_added.items():
                    added = figures(pairs, role)[3][0]
                    if added > bound:
                        out.append((transport, qd, config, role, "in all", added, bound))
                for role, bound in args.max_hooks.items():
                    added = hooks_per_io(pairs, role)
                    if added > bound:
                        out.append((transport, qd, config, role, "in the hooks", added, bound))
    return out


def bound_arg(text):
    role, _, n = text.partition("=")
    if role not in ROLES or not n.isdigit():
        raise argparse.ArgumentTypeError(f"expected host=N or target=N, got '{text}'")
    return role, int(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ao.add_matrix_arguments(ap, rounds=3)
    ap.add_argument("--ios", type=int, default=5000,
                    help="reads in each counted window (about: sized by fio's rate)")
    ap.add_argument("--warmup-ios", type=int, default=500,
                    help="reads fio makes before the window (0: none)")
    ap.add_argument("--windows", type=int, default=1,
                    help="counted windows one after the other in each configuration's fio run "
                         "(the agent starts once a round: more windows resolve more for the "
                         "same start-ups; the fit at equal batching needs at least 5 windows in "
                         "all; NVMe/TCP QD16 resolves to +-0.5 %% with --rounds 3 --windows 3 "
                         "--ios 10000)")
    ap.add_argument("--split", action="store_true",
                    help="also split the added instructions by symbol (BPF programs, trampolines, "
                         "kernel functions, user space)")
    ap.add_argument("--top", type=int, default=8, help="kernel functions shown in the split")
    ap.add_argument("--max-added", type=bound_arg, nargs="*", default=[], metavar="ROLE=N",
                    help="fail (exit 1) when a role's added instructions per I/O exceed N")
    ap.add_argument("--max-hooks", type=bound_arg, nargs="*", default=[], metavar="ROLE=N",
                    help="fail (exit 1) when a role's added instructions per I/O in BPF programs, "
                         "trampolines, BPF's run-time and the attached tracepoints' call sites "
                         "exceed N (needs --split)")
    ap.add_argument("--json", help="also write every run's measurements here")
    ap.add_argument("--summarize", metavar="JSON", help="print the summary of an earlier --json")
    args = ap.parse_args()
    ao.parse_matrix(args)
    if args.windows < 1:
        ap.error("--windows must be at least 1")
    args.max_added = dict(args.max_added)
    args.max_hooks = dict(args.max_hooks)
    if args.max_hooks and not args.split and not args.summarize:
        ap.error("--max-hooks needs --split")
    args.floor = False  # agent_overhead's empty-program floor is a CPU-time tool; not run here
    if args.ios < 2:
        ap.error("--ios must be at least 2")
    if args.summarize:
        with open(args.summarize) as f:
            runs = json.load(f)
    else:
        runs = run_all(args)
    print(summarize(runs, args))
    failed = over_bound(runs, args)
    for transport, qd, config, role, what, added, bound in failed:
        print(f"FAIL: NVMe/{transport.upper()} QD{qd} {ao.config_name(config)}: the {role} runs "
              f"{added:+.0f} instructions per I/O {what} with agents, more than the bound {bound}",
              file=sys.stderr)
    sys.exit(1 if failed else 0)


def run_all(args):
    ao.require_insn_count("insn_overhead", ",".join(args.transports))
    _, devs = ao.prepare_bed(args.transports)
    if args.baseline_ntprofd:
        ao.share_baseline(args.baseline_ntprofd)
    base_symbols = ({r: BootSymbols(kallsyms(r)) for r in ROLES} if args.split else None)
    configs = [OFF] + ao.agent_configs(args)
    runs = []
    total = args.rounds * len(configs) * len(args.qd) * len(args.transports) * args.windows
    started = time.time()
    with tempfile.TemporaryDirectory() as workdir:
        for rnd in range(args.rounds):
            for transport in args.transports:
                shift = rnd % len(configs)  # rotate the order so no configuration always runs first
                for config in configs[shift:] + configs[:shift]:
                    for run in configuration(args, transport, devs[transport], config, base_symbols,
                                             None, workdir):
                        run["round"] = rnd
                        runs.append(run)
                        print(f"[{len(runs)}/{total}, {time.time() - started:.0f} s] {transport} "
                              f"QD{run['qd']} {ao.config_name(config, args.baseline_label)}: "
                              f"per I/O host {run['host_per_io']:.0f}, target "
                              f"{run['target_per_io']:.0f} instructions", file=sys.stderr)
                        if args.json:  # kept as it grows: an interrupted run keeps its rounds
                            with open(args.json, "w") as f:
                                json.dump(runs, f)
    return runs


if __name__ == "__main__":
    main()
