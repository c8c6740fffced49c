#!/bin/bash
# agent_overhead.sh - what recording costs the workload (see agent_overhead.py for what it prints).
# Needs a running test bed (deploy/testbed/tb up --transport tcp,rdma) and a built ntprofctl.
#
#   tests/bench/agent_overhead.sh [--transports tcp,rdma] [--qd 1,16] [--rates 0,100,1]
#                                 [--rounds 5] [--runtime 5] [--warmup 3] [--json FILE]
#                                 [--floor] [--baseline-ntprofd PATH [--baseline-rate N]
#                                 [--baseline-label NAME]]
exec python3 "$(dirname "$0")/agent_overhead.py" "$@"
