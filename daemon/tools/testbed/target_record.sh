#!/bin/sh
# target_record.sh OUT N SALT : (target VM) record the target until OUT.stop appears.
# Extra ntprofd flags in $EXTRA (e.g. EXTRA="--prefer kprobe"). ntprofd is expected at /mnt/host/bin.
OUT=$1; N=$2; SALT=$3; rm -f $OUT.stop $OUT.ready
/mnt/host/bin/ntprofd record --role target -s $N --salt $SALT $EXTRA -i 5 -o $OUT > $OUT.log 2>&1 &
P=$!
sleep 3; touch $OUT.ready
n=0; until [ -e $OUT.stop ]; do sleep 1; n=$((n+1)); [ $n -gt 600 ] && break; done
kill -INT $P; wait $P; echo "target agent exit $?" >> $OUT.log
