# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ntprof's probe contract for user-space NVMe-oF initiators and targets written in Python.

A thin ctypes binding of libntprof_probe.so (probe/ntprof_probe_lib.h). An initiator calls, per
command:

    probe = ntprof_probe.Probe()                 # once: loads the library, clock = CLOCK_MONOTONIC ns
    req = probe.request()                        # one stamp area per command slot (reusable)
    if req.begin(opcode, nsid, slba, nlb, cid):  # sampled? (same decision as the kernel agents)
        ...
    req.stamp(ntprof_probe.H2_CAPSULE_SENT)      # at each boundary (a no-op when not sampled)
    req.done(ntprof_probe.HOST_TCP, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb, bytes, status)

`ntprofd record --spdk-host /usr/lib/ntprof/libntprof_probe.so.1` (or the process's PID) records
every process that loaded the library. Stamps are taken with time.monotonic_ns(), the clock the
library declares (1e9 ticks per second), so each costs one Python call only when sampled.
"""

import ctypes
import os
import time

# enum ntprof_lib_probe
TARGET_TCP, TARGET_RDMA, HOST_TCP, HOST_RDMA = 0, 1, 2, 3

# enum ntprof_probe_host_slot (bpf/ntprof_probe_abi.h)
H1_SUBMIT = 1
H2_CAPSULE_SENT = 2
H3_REPLY_RECEIVED = 3
H4_COMPLETED = 4
H_RESPONSE_RECEIVED = 6
H_R2T_RECEIVED = 7
H_DATA_SENT = 8

# enum ntprof_probe_target_slot
T0_CAPSULE_RECEIVED = 0
T1_REQUEST_STARTED = 1
T2_BDEV_SUBMIT = 2
T3_BDEV_DONE = 3
T4_RESPONSE_QUEUED = 4
T5_REPLY_SENT = 5
T_R2T_SENT = 8
T_DATA_RECEIVED = 9
T_RESPONSE_SENT = 12

PROBE_VERSION = 1  # NTPROF_PROBE_VERSION this binding was written for
DEFAULT_LIBRARY = "/usr/lib/ntprof/libntprof_probe.so.1"


class ProbeError(RuntimeError):
    pass


class Probe:
    """The loaded library. `path`: the library (default $NTPROF_PROBE_LIB, then the installed one)."""

    def __init__(self, path=None):
        path = path or os.environ.get("NTPROF_PROBE_LIB") or DEFAULT_LIBRARY
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as e:
            raise ProbeError(f"cannot load the ntprof probe library {path}: {e} "
                             "(install ntprof-dev, or set NTPROF_PROBE_LIB)") from None
        lib = self.lib
        lib.ntprof_lib_version.restype = ctypes.c_uint32
        lib.ntprof_lib_req_size.restype = ctypes.c_size_t
        lib.ntprof_lib_sample_rate.restype = ctypes.c_uint32
        lib.ntprof_lib_init.argtypes = [ctypes.c_uint64]
        lib.ntprof_lib_begin.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32,
                                         ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint16]
        lib.ntprof_lib_begin.restype = ctypes.c_int
        lib.ntprof_lib_stamp.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint64]
        lib.ntprof_lib_stamp_first.argtypes = lib.ntprof_lib_stamp.argtypes
        lib.ntprof_lib_done.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_uint16,
            ctypes.c_uint16, ctypes.c_uint16, ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64,
            ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint16]
        lib.ntprof_lib_done.restype = ctypes.c_int
        version = lib.ntprof_lib_version()
        if version < PROBE_VERSION:
            raise ProbeError(f"{path} implements probe contract version {version}; "
                             f"this binding needs {PROBE_VERSION} or later")
        self.req_size = lib.ntprof_lib_req_size()
        lib.ntprof_lib_init(1_000_000_000)  # stamps are time.monotonic_ns()

    def sample_rate(self):
        """N of "one command in N" the agent set; 0 while no agent is attached (or it stopped)."""
        return self.lib.ntprof_lib_sample_rate()

    def wait_for_agent(self, seconds):
        """Waits up to `seconds` for an agent to switch sampling on; returns whether it did."""
        deadline = time.monotonic() + seconds
        while self.sample_rate() == 0:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def request(self):
        return Request(self)


class Request:
    """One command's stamp area (struct ntprof_probe_req), reused command after command."""

    def __init__(self, probe):
        self._lib = probe.lib
        self._buf = ctypes.create_string_buffer(probe.req_size)
        self._ptr = ctypes.cast(self._buf, ctypes.c_void_p)
        self.sampled = False

    def begin(self, opcode, nsid, slba, nlb, cid):
        """The sampling decision on the SQE's raw fields; True when this command is sampled."""
        self.sampled = bool(self._lib.ntprof_lib_begin(self._ptr, opcode, nsid, slba, nlb, cid))
        return self.sampled

    def stamp(self, slot, ns=None):
        if self.sampled:
            self._lib.ntprof_lib_stamp(self._ptr, slot, time.monotonic_ns() if ns is None else ns)

    def stamp_first(self, slot, ns=None):
        if self.sampled:
            self._lib.ntprof_lib_stamp_first(self._ptr, slot,
                                             time.monotonic_ns() if ns is None else ns)

    def done(self, probe, subnqn, cntlid, qid, cid, opcode, nsid, slba, nlb, nbytes, status):
        """Fires the done probe (HOST_TCP, ...) of a sampled command; nothing when not sampled."""
        if not self.sampled:
            return
        if isinstance(subnqn, str):
            subnqn = subnqn.encode()
        self._lib.ntprof_lib_done(self._ptr, probe, time.monotonic_ns(), subnqn, cntlid, qid, cid,
                                  opcode, nsid, slba, nlb, nbytes, status)
        self.sampled = False
