#!/bin/sh
# bpf_run_stats.sh ROLE OUT N : run the agent with kernel.bpf_stats_enabled until OUT.stop appears, then
# dump `bpftool -j prog show` (run_cnt, run_time_ns per program) to OUT.json. Needs bpftool in the VM.
ROLE=$1; OUT=$2; N=$3
sysctl -qw kernel.bpf_stats_enabled=1
rm -f $OUT.stop
/mnt/host/bin/ntprofd record --role $ROLE -s $N --salt 5 -i 5 -q -o $OUT > $OUT.log 2>&1 &
P=$!
n=0; until [ -e $OUT.stop ]; do sleep 1; n=$((n+1)); [ $n -gt 300 ] && break; done
bpftool -j prog show > $OUT.json 2>/dev/null
kill -INT $P; wait $P
sysctl -qw kernel.bpf_stats_enabled=0
