#!/usr/bin/env python3
"""Fires COUNT commands through the Python binding of libntprof_probe.so with KNOWN stamp offsets
(ground truth for python_binding_test.sh): each command's host stamps are placed at fixed
microsecond offsets from its submit, so the stages ntprofd records must equal them exactly.

usage: known_commands.py COUNT [tcp|rdma]   (NTPROF_PROBE_LIB names the library; prints one JSON
line). The transport picks the done probe (HOST_TCP or HOST_RDMA); the stamps are the same.
"""
import json
import sys
import time

import ntprof_probe as np

SUBNQN = "nqn.2024-01.io.ntprof:python-binding"
CNTLID, QID = 7, 1
# microseconds after H1 (submit): capsule sent, first reply, response, completed
OFFSETS_US = {np.H2_CAPSULE_SENT: 40, np.H3_REPLY_RECEIVED: 1040, np.H_RESPONSE_RECEIVED: 1100,
              np.H4_COMPLETED: 1160}
DONE_AFTER_US = 1200


def main():
    count = int(sys.argv[1])
    done_probe = {"tcp": np.HOST_TCP, "rdma": np.HOST_RDMA}[sys.argv[2] if len(sys.argv) > 2 else "tcp"]
    probe = np.Probe()
    if not probe.wait_for_agent(30):
        sys.exit("known_commands.py: no agent attached to the probe library in 30 s")
    req = probe.request()
    sampled = 0
    for i in range(count):
        cid, slba, nlb = i % 64, i * 8, 7
        opcode = 0x02 if i % 2 == 0 else 0x01
        if req.begin(opcode, 1, slba, nlb, cid):
            sampled += 1
        h1 = time.monotonic_ns()
        req.stamp(np.H1_SUBMIT, h1)
        for slot, us in OFFSETS_US.items():
            req.stamp(slot, h1 + us * 1000)
        # done_ticks must follow the last stamp: the agent places stamps before the probe's time
        while time.monotonic_ns() < h1 + DONE_AFTER_US * 1000:
            pass
        req.done(done_probe, SUBNQN, CNTLID, QID, cid, opcode, 1, slba, nlb, (nlb + 1) * 512,
                 0 if i % 5 else 0x0281)
    print(json.dumps({"commands": count, "sampled": sampled}))


if __name__ == "__main__":
    main()
