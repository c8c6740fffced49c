#!/usr/bin/env python3
"""agent_insns.py - the agent's own instructions, counted exactly: per record and per idle second.

The real `ntprofd record` records a loop device (--transport local, 1 in 1) on this machine under
callgrind, which counts every user-space instruction the agent runs (the BPF programs run in the
kernel and are not in it). Each figure is the difference of two runs that differ only in what is
measured, so the start (BPF loading, BTF parsing) and the end cancel out:

  per record      = (count with R2 direct reads - count with R1 reads) / (records R2 - records R1),
                    with the interval lines (default) and with -q (what the service's path does
                    without them);
  per idle second = (count idle for S2 seconds - count idle for S1) / (S2 - S1), 1 s intervals.

and the system calls of one idle interval, from strace attached to an idle agent (not under
callgrind). With --baseline-ntprofd another build's agent runs the same runs in the same sitting,
and each figure is printed with the ratio baseline / this build. Counts, not times: the figures
do not depend on the machine's load (only how long the runs take does).

  agent_insns.py [--ntprofd build/daemon/ntprofd] [--baseline-ntprofd PATH]
                 [--reads 2000,10000] [--idle 5,25] [--strace-seconds 10]

Needs root, BPF with BTF, losetup, valgrind and strace. Takes a few minutes per build.
"""
import argparse
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_NTPROFD = os.path.join(HERE, "..", "..", "build", "daemon", "ntprofd")
BLOCK = 4096
DEVICE_BYTES = 64 << 20


class LoopDevice:
    def __init__(self, workdir):
        self.backing = os.path.join(workdir, "loop.img")
        with open(self.backing, "wb") as f:
            f.truncate(DEVICE_BYTES)
        self.path = subprocess.check_output(
            ["losetup", "-f", "--show", "--direct-io=on", self.backing], text=True).strip()

    def read(self, blocks):
        """blocks direct 4 KiB reads (one sampled command each at 1 in 1)."""
        count = DEVICE_BYTES // BLOCK
        done = 0
        while done < blocks:
            n = min(count, blocks - done)
            subprocess.run(["dd", f"if={self.path}", "of=/dev/null", f"bs={BLOCK}", f"count={n}",
                            "iflag=direct", "status=none"], check=True)
            done += n

    def close(self):
        subprocess.run(["losetup", "-d", self.path], check=False)


def trailer_records(ntp):
    """FileTrailer.records of a finalized .ntp file."""
    with open(ntp, "rb") as f:
        data = f.read()
    header_len = struct.unpack_from("<I", data, 12)[0]
    at = 20 + header_len
    records = None
    while at + 12 <= len(data):
        kind, length, _ = struct.unpack_from("<III", data, at)
        payload = data[at + 12:at + 12 + length]
        at += 12 + length
        if kind == 2:  # trailer: field 1 (records) is a varint
            records = 0
            if payload[:1] == b"\x08":
                shift, i = 0, 1
                while True:
                    b = payload[i]
                    records |= (b & 0x7F) << shift
                    shift += 7
                    i += 1
                    if not b & 0x80:
                        break
    if records is None:
        raise RuntimeError(f"{ntp}: no trailer")
    return records


def agent_args(ntprofd, loop, ntp, quiet):
    args = [ntprofd, "record", "--role", "host", "--transport", "local", "--device", loop.path,
            "-s", "1", "-i", "1", "-o", ntp]
    return args + (["-q"] if quiet else [])


def wait_started(proc, ntp, timeout=900):
    """The output file exists once the hooks are attached (the sink opens after Start)."""
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"agent exited early ({proc.returncode})")
        if os.path.exists(ntp) and os.path.getsize(ntp) > 0:
            return
        time.sleep(0.2)
    raise RuntimeError("agent did not start")


def counted_run(ntprofd, loop, workdir, reads, idle_s, quiet):
    """One agent under callgrind: (instructions in all, records)."""
    ntp = os.path.join(workdir, "run.ntp")
    out = os.path.join(workdir, "callgrind.out")
    for p in (ntp, out):
        if os.path.exists(p):
            os.unlink(p)
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] +
                            agent_args(ntprofd, loop, ntp, quiet),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_started(proc, ntp)
    time.sleep(3)  # its first intervals: past the start
    if reads:
        loop.read(reads)
        time.sleep(3)  # drained
    if idle_s:
        time.sleep(idle_s)
    proc.send_signal(signal.SIGINT)
    if proc.wait(timeout=600) != 0:
        raise RuntimeError(f"agent failed ({proc.returncode})")
    with open(out) as f:
        total = None
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                total = int(m.group(1))
    return total, trailer_records(ntp)


def idle_syscalls(ntprofd, loop, workdir, seconds):
    """System calls per interval of an idle agent, by name."""
    ntp = os.path.join(workdir, "strace.ntp")
    if os.path.exists(ntp):
        os.unlink(ntp)
    proc = subprocess.Popen(agent_args(ntprofd, loop, ntp, False), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_started(proc, ntp)
        time.sleep(2)
        log = os.path.join(workdir, "strace.log")
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", log, "-p", str(proc.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(seconds)
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    calls = {}
    with open(log) as f:
        for line in f:
            m = re.match(r"(?:\d+\s+)?([a-z_0-9]+)\(", line)
            if m and "resumed" not in line:
                calls[m.group(1)] = calls.get(m.group(1), 0) + 1
    return {name: n / seconds for name, n in calls.items()}


def measure(ntprofd, loop, workdir, args):
    r1, r2 = (int(x) for x in args.reads.split(","))
    s1, s2 = (float(x) for x in args.idle.split(","))
    got = {}
    for quiet in (False, True):
        (c1, n1), (c2, n2) = (counted_run(ntprofd, loop, workdir, r, 0, quiet) for r in (r1, r2))
        got["per record" + (" (-q)" if quiet else "")] = (c2 - c1) / (n2 - n1)
        print(f"  {ntprofd}{' -q' if quiet else ''}: {n1} records {c1:,}, {n2} records {c2:,}",
              file=sys.stderr)
    (c1, _), (c2, _) = (counted_run(ntprofd, loop, workdir, 0, s, False) for s in (s1, s2))
    got["per idle second"] = (c2 - c1) / (s2 - s1)
    calls = idle_syscalls(ntprofd, loop, workdir, args.strace_seconds)
    got["system calls per idle second"] = sum(calls.values())
    got["calls"] = calls
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--ntprofd", default=DEFAULT_NTPROFD)
    ap.add_argument("--baseline-ntprofd", metavar="PATH", help="also run another build's agent")
    ap.add_argument("--reads", default="2000,10000", help="R1,R2 direct 4 KiB reads")
    ap.add_argument("--idle", default="5,25", help="S1,S2 idle seconds")
    ap.add_argument("--strace-seconds", type=float, default=10)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("agent_insns.py: needs root (BPF, loop devices)")
    builds = {"this build": os.path.abspath(args.ntprofd)}
    if args.baseline_ntprofd:
        builds["baseline"] = os.path.abspath(args.baseline_ntprofd)
    results = {}
    with tempfile.TemporaryDirectory(prefix="ntprof-agent-insns-") as workdir:
        loop = LoopDevice(workdir)
        try:
            for name, path in builds.items():
                results[name] = measure(path, loop, workdir, args)
        finally:
            loop.close()
    print("\n== the agent's user-space instructions (callgrind), 1 in 1, 1 s intervals ==")
    for figure in ("per record", "per record (-q)", "per idle second",
                   "system calls per idle second"):
        line = f"  {figure:30} this build {results['this build'][figure]:10,.0f}"
        if "baseline" in results:
            base = results["baseline"][figure]
            this = results["this build"][figure]
            line += f"   baseline {base:10,.0f}   ratio {base / this if this else float('inf'):.2f}x"
        print(line)
    for name, got in results.items():
        calls = ", ".join(f"{k} {v:.1f}" for k, v in sorted(got["calls"].items(), key=lambda kv: -kv[1]))
        print(f"  idle system calls per second, {name}: {calls}")


if __name__ == "__main__":
    main()
