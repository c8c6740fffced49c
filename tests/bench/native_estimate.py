#!/usr/bin/env python3
"""What a guest instruction costs on this machine's CPU: the factor that turns the test bed's
added instructions per I/O (insn_overhead.py) into a native time per I/O.

The bed counts instructions exactly, but a count is not a time. This benchmark runs one path
twice, once counted in the bed's host VM and once timed on this machine's own CPU and kernel:
4 KiB random reads at QD1 (fio, io_uring, direct, a fixed number of reads) on a loop device backed
by a file in /dev/shm, without an agent and with `ntprofd record --transport local -s 1` (every
command sampled: the block-layer hooks decide, stamp, emit a record through the ring buffer, and
the agent converts and writes it). So it measures the same kinds of code the NVMe-oF overhead is
made of: BPF programs and their dispatch, the ring buffer and the agent's per-record work.

    ns per instruction of the read path  = native ns per read / guest instructions per read
    ns per added instruction             = (native ns per read with the agent - without)
                                           / (guest instructions per read with it - without)

The native time per read is fio's mean completion latency; rounds alternate the two runs and the
median is taken, since this machine's load varies. Guest and native kernels differ (the bed's
Debian 6.1 against this machine's own), so the factor is an estimate, and it is printed with the
spread of its rounds.

  native_estimate.py [--ios 20000] [--guest-ios 3000] [--rounds 5] [--json FILE]
                     [--added N ...]     also print N added instructions per I/O as native ns
                     [--guest-from FILE] take the guest rounds from an earlier --json (no bed:
                                         rerun the native rounds alone on a quieter machine)

Needs root, a built ntprofd (NTPROF_BUILD_DIR or --build), fio and losetup here, and a bed booted
with instruction counting (deploy/testbed/tb up --insn-count --transport tcp), unless --guest-from.
The native rounds need a quiet machine (a loaded one spreads them by several times).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import agent_overhead as ao
import insn_overhead as io_

SIZE_MIB = 256
GUEST_BACKING = "/dev/shm/ntprof-native-estimate"


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def fio_command(dev, ios):
    return ["fio", "--name=estimate", f"--filename={dev}", "--direct=1", "--ioengine=io_uring",
            "--rw=randread", "--bs=4k", "--iodepth=1", f"--number_ios={ios}",
            "--output-format=json"]


# ---- native: this machine's CPU and kernel ------------------------------------------------------
def native_ns_per_read(dev, ios):
    job = json.loads(run(*fio_command(f"/dev/{dev}", ios)))["jobs"][0]["read"]
    return job["lat_ns"]["mean"]


def native_rounds(args):
    """[(ns per read without the agent, with it)] per round, on a loop device of this machine."""
    work = tempfile.mkdtemp(prefix="ntprof-estimate-")
    backing = tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="ntprof-estimate-", delete=False).name
    dev, rounds = None, []
    try:
        run("dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={SIZE_MIB}", "status=none")
        dev = os.path.basename(run("losetup", "--find", "--show", backing).strip())
        for rnd in range(args.rounds):
            pair = {}
            for with_agent in ((False, True) if rnd % 2 == 0 else (True, False)):
                agent = None
                if with_agent:
                    agent = subprocess.Popen(
                        [args.ntprofd, "record", "--role", "host", "--transport", "local",
                         "--device", dev, "-s", "1", "-o", os.path.join(work, "run.ntp")],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    for line in agent.stdout:  # "ntprofd: recording ..." once every hook is on
                        if "recording" in line:
                            break
                    else:
                        sys.exit(f"native_estimate.py: ntprofd exited {agent.wait()} before it recorded")
                try:
                    pair[with_agent] = native_ns_per_read(dev, args.ios)
                finally:
                    if agent:
                        agent.send_signal(2)
                        agent.communicate(timeout=60)
            rounds.append((pair[False], pair[True]))
            print(f"native round {rnd + 1}/{args.rounds}: {pair[False]:.0f} ns per read without the "
                  f"agent, {pair[True]:.0f} with it", file=sys.stderr, flush=True)
    finally:
        if dev:
            subprocess.run(["losetup", "-d", f"/dev/{dev}"], check=False)
        os.unlink(backing)
        subprocess.run(["rm", "-rf", work], check=False)
    return rounds


# ---- guest: the bed's host VM, counted ---------------------------------------------------------
GUEST_WARMUP_IOS = 200  # the agent's first records cost its start-up: it is measured warm


def guest_instructions_per_read(dev, ios):
    reads, insns = io_.counted_window(dev, 1, ios, GUEST_WARMUP_IOS)
    if reads < 1:
        raise RuntimeError(f"no read completed in the window on {dev}")
    return insns["host"] / reads


def guest_rounds(args):
    """[(instructions per read without the agent, with it)] per round, in the bed's host VM."""
    ao.require_insn_count("native_estimate.py", "tcp")
    ao.prepare_bed([])
    dev = ao.tb("ssh", "host", f"modprobe loop; dd if=/dev/urandom of={GUEST_BACKING} bs=1M count={SIZE_MIB} "
                f"status=none && losetup --find --show {GUEST_BACKING}").strip().splitlines()[-1]
    rounds = []
    try:
        for rnd in range(args.guest_rounds):
            pair = {}
            for with_agent in ((False, True) if rnd % 2 == 0 else (True, False)):
                if with_agent:
                    ao.guest("host", "start", "host", "local", 1, os.path.basename(dev))
                try:
                    pair[with_agent] = guest_instructions_per_read(dev, args.guest_ios)
                finally:
                    if with_agent:
                        ao.guest("host", "stop")
            rounds.append((pair[False], pair[True]))
            print(f"guest round {rnd + 1}/{args.guest_rounds}: {pair[False]:.0f} instructions per "
                  f"read without the agent, {pair[True]:.0f} with it", file=sys.stderr, flush=True)
    finally:
        ao.tb("ssh", "host", f"losetup -d {dev}; rm -f {GUEST_BACKING}")
    return rounds


def summarize(native, guest, added):
    base_ns = statistics.median(n for n, _ in native)
    extra_ns = [w - n for n, w in native]
    base_insn = statistics.median(n for n, _ in guest)
    extra_insn = statistics.median(w - n for n, w in guest)
    per_insn = base_ns / base_insn
    per_added = statistics.median(extra_ns) / extra_insn
    _, lo, hi = ao.median_ci([e / extra_insn for e in extra_ns])
    # the fastest round of each kind is the one least disturbed by the machine's other work
    per_added_min = (min(w for _, w in native) - min(n for n, _ in native)) / extra_insn
    out = {"native_ns_per_read": base_ns, "guest_insns_per_read": base_insn,
           "ns_per_insn_read_path": per_insn, "native_added_ns_per_read_rate1": statistics.median(extra_ns),
           "guest_added_insns_per_read_rate1": extra_insn, "ns_per_added_insn": per_added,
           "ns_per_added_insn_ci": [lo, hi], "ns_per_added_insn_fastest_rounds": per_added_min,
           "estimates": {str(n): n * per_added for n in added}}
    lines = [
        "== loop device on /dev/shm, 4 KiB random reads, QD1 (guest: Debian 6.1 in the bed; native: "
        "this machine)",
        f"read path:  {base_insn:,.0f} guest instructions, {base_ns:,.0f} ns native -> "
        f"{per_insn:.3f} ns per instruction",
        f"agent at 1 in 1 (hooks, ring buffer, agent per record):  +{extra_insn:,.0f} instructions, "
        f"+{statistics.median(extra_ns):,.0f} ns -> {per_added:.3f} ns per added instruction "
        f"(95 % CI of the native rounds {lo:.3f}-{hi:.3f}; fastest rounds {per_added_min:.3f})",
    ]
    for n in added:
        lines.append(f"  {n:,} added instructions per I/O ~ {n * per_added / 1000:.2f} us native "
                     f"({n * lo / 1000:.2f}-{n * hi / 1000:.2f})")
    return out, "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ios", type=int, default=20000, help="reads in each native run")
    ap.add_argument("--guest-ios", type=int, default=3000, help="reads in each counted guest run")
    ap.add_argument("--rounds", type=int, default=5, help="native rounds")
    ap.add_argument("--guest-rounds", type=int, default=2, help="guest rounds")
    ap.add_argument("--added", type=int, nargs="*", default=[],
                    help="added instructions per I/O to print as native time")
    ap.add_argument("--build", default=os.environ.get("NTPROF_BUILD_DIR", os.path.join(ao.REPO, "build")))
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--guest-from", help="the guest rounds of an earlier --json file")
    args = ap.parse_args()
    if args.guest_ios < 2 or args.ios < 1 or args.rounds < 1 or args.guest_rounds < 1:
        ap.error("--ios, --rounds and --guest-rounds must be at least 1, --guest-ios at least 2")
    if os.geteuid() != 0:
        sys.exit("native_estimate.py: run as root (BPF, losetup)")
    args.ntprofd = os.path.join(args.build, "daemon", "ntprofd")
    if not os.access(args.ntprofd, os.X_OK):
        sys.exit(f"native_estimate.py: {args.ntprofd} not built (cmake --build {args.build})")
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=False)
    if args.guest_from:
        with open(args.guest_from) as f:
            guest = json.load(f)["guest_rounds"]
    else:
        guest = guest_rounds(args)
    native = native_rounds(args)
    figures, text = summarize(native, guest, args.added)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"native_rounds": native, "guest_rounds": guest, **figures}, f, indent=1)


if __name__ == "__main__":
    main()
