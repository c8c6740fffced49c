#!/bin/sh
# host_record_fio.sh OUT N SALT RT [PHASES] : (host VM) record the host while fio runs the phases
# (RT s each, each phase in its own 512 MiB region of /dev/nvme0n1); N=none runs fio alone.
# Phases: 0 randread 4k qd1, 1 randread 4k qd8, 2 randwrite 4k qd1, 3 randwrite 4k qd8,
# 4 randwrite 32k qd4 (R2T), 5 randread 128k qd2. Extra ntprofd flags in $EXTRA.
OUT=$1; N=$2; SALT=$3; RT=${4:-5}; PHASES=${5:-"0 1 2 3 4 5"}
if [ "$N" != none ]; then
  /mnt/host/bin/ntprofd record --role host -s $N --salt $SALT $EXTRA -i 5 -o $OUT > $OUT.log 2>&1 &
  P=$!
  sleep 3
fi
rm -f $OUT.fio
echo "stat before: $(cat /sys/block/nvme0n1/stat)" > $OUT.stat
for i in $PHASES; do
  case $i in
    0) rw=randread;  bs=4k;   qd=1;; 1) rw=randread;  bs=4k;  qd=8;;
    2) rw=randwrite; bs=4k;   qd=1;; 3) rw=randwrite; bs=4k;  qd=8;;
    4) rw=randwrite; bs=32k;  qd=4;; 5) rw=randread;  bs=128k; qd=2;;
  esac
  fio --name=p$i --filename=/dev/nvme0n1 --rw=$rw --bs=$bs --iodepth=$qd --ioengine=io_uring --direct=1 \
      --offset=$((i*512))m --size=512m --runtime=$RT --time_based --output-format=terse > /tmp/fio.$i 2>&1
  awk -F';' -v n="phase$i $rw $bs qd$qd" '/^3;/{printf "FIO %s: iops read=%d write=%d\n", n, $8, $49}' /tmp/fio.$i >> $OUT.fio
done
echo "stat after:  $(cat /sys/block/nvme0n1/stat)" >> $OUT.stat
sleep 1
[ "$N" != none ] && { kill -INT $P; wait $P; echo "host agent exit $?" >> $OUT.log; }
cat $OUT.fio
