# tbctl.sh - run inside a testbed VM by deploy/testbed/tb (piped over ssh: bash -s -- CMD ARGS...).
# It is read from the repository at every call, so changes here need no image rebuild.
#
# target side:
#   target-setup TRANSPORT PORT NQN NSEC1 NSEC2 SIZE_MB [PORT_ID]
#                              null_blk x2 -> nvmet subsystem NQN (nsid 1, 2) -> nvmet port PORT_ID
#                              (default 1); called once per transport, the drives are shared
#   drive-delay NSID NSEC      change nullb<NSID-1>'s completion delay in every subsystem (see below)
#   link-delay USEC            netem delay on eth1 egress (0 = none)
#   target-status
#   bio-disk NAME NSEC SIZE_MB null_blk NAME in bio mode (no request: what device mapper and md
#                              are to the block layer), completion after NSEC
#   namespace-add NQN NSID DEV enable namespace NSID of NQN on DEV
#   namespace-remove NQN NSID  disable and remove namespace NSID, then its null_blk if it is one
# host side:
#   host-connect TRANSPORT ADDR PORT NQN                connect, wait for the namespaces, print "nsid dev"
#   host-devices NQN                                    print "nsid dev" for the connected subsystem
#   host-rescan NQN [COUNT]                             nvme ns-rescan + wait for COUNT (2) namespaces
#   host-busy NQN NSID                                  exit 0 if the namespace did I/O within 0.5 s
#   host-disconnect NQN
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
NULLB=/sys/kernel/config/nullb
NVMET=/sys/kernel/config/nvmet
say() { echo "[$(hostname) +$(cut -d' ' -f1 /proc/uptime)s] $*" >&2; }
die() { echo "$(hostname): $*" >&2; exit 1; }
# wait_for SECONDS COMMAND... : poll every 0.1 s
wait_for() { local n=$(( $1 * 10 )); shift; until "$@"; do n=$((n-1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }

rdma_link() {   # soft-RoCE on eth1
  modprobe rdma_rxe || die "modprobe rdma_rxe failed"
  rdma link show 2>/dev/null | grep -q 'netdev eth1' || rdma link add rxe0 type rxe netdev eth1 \
    || die "rdma link add rxe0 type rxe netdev eth1 failed"
}

# nullb_config NAME NSEC: irqmode 0 (complete at once) for 0 ns, else timer completion after NSEC
nullb_config() {
  local d=$NULLB/$1
  if [ "$2" -gt 0 ]; then echo 2 > "$d/irqmode"; echo "$2" > "$d/completion_nsec"
  else echo 0 > "$d/irqmode"; echo 0 > "$d/completion_nsec"; fi
}
nullb_create() {   # NAME NSEC SIZE_MB [QUEUE_MODE: 2 = blk-mq (default), 0 = bio]
  local d=$NULLB/$1
  [ -d "$d" ] && [ "$(cat "$d/power")" = 1 ] && return 0
  mkdir -p "$d"
  echo "$3" > "$d/size"; echo 4096 > "$d/blocksize"; echo "${4:-2}" > "$d/queue_mode"
  echo 1 > "$d/submit_queues"; echo 128 > "$d/hw_queue_depth"; echo 0 > "$d/memory_backed"
  nullb_config "$1" "$2"
  echo 1 > "$d/power" || die "cannot power on null_blk $1"
  wait_for 10 test -b "/dev/$1" || die "/dev/$1 did not appear"
}

nvmet_ns() {   # NQN NSID DEV
  local ns=$NVMET/subsystems/$1/namespaces/$2
  mkdir -p "$ns"
  if [ "$(cat "$ns/enable")" != 1 ]; then
    echo -n "$3" > "$ns/device_path"
    echo 1 > "$ns/enable" || die "cannot enable namespace $2 ($3)"
  fi
}

target_setup() {
  local tr=$1 port=$2 nqn=$3 nsec1=$4 nsec2=$5 mb=$6 port_id=${7:-1}
  [ -d /sys/module/null_blk ] || modprobe null_blk nr_devices=0 || die "modprobe null_blk failed"
  nullb_create nullb0 "$nsec1" "$mb"
  nullb_create nullb1 "$nsec2" "$mb"
  modprobe nvmet || die "modprobe nvmet failed"
  case $tr in
    tcp)  modprobe nvmet-tcp || die "modprobe nvmet-tcp failed" ;;
    rdma) rdma_link; modprobe nvmet-rdma || die "modprobe nvmet-rdma failed" ;;
  esac
  local s=$NVMET/subsystems/$nqn p=$NVMET/ports/$port_id
  mkdir -p "$s"
  echo 1 > "$s/attr_allow_any_host"
  nvmet_ns "$nqn" 1 /dev/nullb0
  nvmet_ns "$nqn" 2 /dev/nullb1
  if [ ! -d "$p" ]; then
    mkdir "$p"
    echo "$tr" > "$p/addr_trtype"; echo ipv4 > "$p/addr_adrfam"
    echo 192.168.100.1 > "$p/addr_traddr"; echo "$port" > "$p/addr_trsvcid"
  fi
  [ "$(cat "$p/addr_trtype")" = "$tr" ] || die "nvmet port $port_id is $(cat "$p/addr_trtype"), not $tr: tb down first"
  [ -e "$p/subsystems/$nqn" ] || ln -s "$s" "$p/subsystems/$nqn" || die "cannot link $nqn to port $port_id"
  say "nvmet: $tr 192.168.100.1:$port $nqn ns1=/dev/nullb0 ($(nullb_desc nullb0)) ns2=/dev/nullb1 ($(nullb_desc nullb1))"
}

namespace_add() {   # NQN NSID DEV
  [ -d "$NVMET/subsystems/$1" ] || die "no nvmet subsystem $1: target-setup first"
  nvmet_ns "$1" "$2" "$3"
  say "nvmet: $1 ns$2=$3"
}

namespace_remove() {   # NQN NSID
  local ns=$NVMET/subsystems/$1/namespaces/$2 dev
  [ -d "$ns" ] || return 0
  dev=$(cat "$ns/device_path")
  echo 0 > "$ns/enable"
  rmdir "$ns" || die "cannot remove namespace $2 of $1"
  case $dev in
    /dev/nullb*) [ -d "$NULLB/${dev#/dev/}" ] && { echo 0 > "$NULLB/${dev#/dev/}/power"; rmdir "$NULLB/${dev#/dev/}"; } ;;
  esac
  say "nvmet: $1 ns$2 ($dev) removed"
}

nullb_desc() { echo "irqmode=$(cat $NULLB/$1/irqmode) completion_nsec=$(cat $NULLB/$1/completion_nsec)"; }

# null_blk (6.1) refuses completion_nsec/irqmode changes while powered (EBUSY), and a power cycle
# deletes the gendisk under nvmet.  So: take the namespace offline, power-cycle the null_blk with
# the new delay, put the namespace back.  The host gets a namespace-changed AEN; its block device
# comes back (same name) after its rescan.  I/O to that namespace fails during the switch: idle it.
drive_delay() {
  local nsid=$1 nsec=$2 dev=nullb$(( $1 - 1 )) ns nss=()
  for ns in "$NVMET"/subsystems/*/namespaces/"$nsid"; do
    [ -d "$ns" ] && [ "$(cat "$ns/device_path")" = "/dev/$dev" ] && nss+=("$ns")
  done
  [ ${#nss[@]} -gt 0 ] || die "no subsystem has namespace $nsid on /dev/$dev"
  [ "$(cat $NULLB/$dev/completion_nsec)" = "$nsec" ] && [ "$(cat $NULLB/$dev/irqmode)" = "$([ "$nsec" -gt 0 ] && echo 2 || echo 0)" ] \
    && { say "$dev already at $(nullb_desc $dev)"; return 0; }
  for ns in "${nss[@]}"; do echo 0 > "$ns/enable"; done
  echo 0 > "$NULLB/$dev/power"
  nullb_config "$dev" "$nsec"
  echo 1 > "$NULLB/$dev/power" || die "cannot power on $dev"
  wait_for 10 test -b "/dev/$dev" || die "/dev/$dev did not come back"
  for ns in "${nss[@]}"; do
    echo -n "/dev/$dev" > "$ns/device_path"
    echo 1 > "$ns/enable" || die "cannot re-enable $ns"
  done
  say "nsid $nsid = /dev/$dev: $(nullb_desc $dev) (${#nss[@]} subsystem(s))"
}

link_delay() {
  if [ "$1" -gt 0 ]; then
    modprobe sch_netem 2>/dev/null
    tc qdisc replace dev eth1 root netem delay "${1}us" limit 10000 || die "tc netem failed"
  else
    tc qdisc del dev eth1 root 2>/dev/null
  fi
  say "eth1 qdisc: $(tc qdisc show dev eth1 | head -n1)"
}

target_status() {
  for d in nullb0 nullb1; do [ -d $NULLB/$d ] && echo "$d: $(nullb_desc $d) size=$(cat $NULLB/$d/size)MB"; done
  local s ns
  for s in "$NVMET"/subsystems/*; do
    for ns in "$s"/namespaces/*; do
      [ -d "$ns" ] && echo "${s##*/} nsid ${ns##*/}: $(cat "$ns/device_path") enable=$(cat "$ns/enable")"
    done
  done
  for p in $NVMET/ports/*; do [ -d "$p" ] && echo "port ${p##*/}: $(cat "$p/addr_trtype") $(cat "$p/addr_traddr"):$(cat "$p/addr_trsvcid")"; done
  echo "eth1 qdisc: $(tc qdisc show dev eth1 | head -n1)"
}

# host side ------------------------------------------------------------------------------
host_devices() {   # "nsid /dev/nvmeXnY" for every namespace block device of subsystem NQN
  local b
  for b in /sys/block/nvme*n*; do
    [ -e "$b" ] || continue
    case ${b##*/} in nvme*c*n*) continue ;; esac      # hidden multipath path devices
    [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    echo "$(cat "$b/nsid" 2>/dev/null || cat "$b/device/nsid") /dev/${b##*/}"
  done | sort -n
}
host_ctrl() {      # controller names (nvmeN) connected to NQN
  local c
  for c in /sys/class/nvme/nvme*; do
    [ -e "$c" ] && [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && echo "${c##*/}"
  done
}
have_ns() { [ "$(host_devices "$1" | wc -l)" -ge "$2" ]; }

host_connect() {
  local tr=$1 addr=$2 port=$3 nqn=$4 i
  case $tr in
    tcp)  modprobe nvme-tcp || die "modprobe nvme-tcp failed" ;;
    rdma) rdma_link; modprobe nvme-rdma || die "modprobe nvme-rdma failed" ;;
  esac
  if [ -z "$(host_ctrl "$nqn")" ]; then
    for i in 1 2 3 4 5; do
      nvme connect -t "$tr" -a "$addr" -s "$port" -n "$nqn" --keep-alive-tmo=30 --reconnect-delay=2 \
        --ctrl-loss-tmo=600 >&2 && break
      [ $i = 5 ] && { dmesg | tail -n 15 >&2; die "nvme connect -t $tr -a $addr -s $port -n $nqn failed"; }
      say "nvme connect failed (try $i), retrying"; sleep 2
    done
  fi
  wait_for 60 have_ns "$nqn" 2 || { dmesg | tail -n 15 >&2; die "namespaces of $nqn did not appear"; }
  host_devices "$nqn"
}

host_rescan() {   # NQN [COUNT]
  local c
  for c in $(host_ctrl "$1"); do nvme ns-rescan "/dev/$c" >&2; done
  wait_for 30 have_ns "$1" "${2:-2}" || die "namespaces of $1 did not come back after rescan"
  host_devices "$1"
}

host_busy() {
  local d s n a b
  d=$(host_devices "$1" | awk -v n="$2" '$1==n{print $2}')
  [ -n "$d" ] || return 1
  d=${d#/dev/}; s=${d%n*}; n=${d##*n}
  # a multipath head (nvmeSnN) counts no I/O on 6.1; its paths (nvmeScCnN) do
  stats() { cat /sys/block/$d/stat /sys/block/${s}c*n$n/stat 2>/dev/null | awk '{r+=$1; w+=$5; q+=$9} END {print r, w, q}'; }
  a=$(stats); sleep 0.5; b=$(stats)
  [ "$a" != "$b" ] || [ "${b##* }" != 0 ]
}

cmd=${1:-}; [ $# -gt 0 ] && shift
case $cmd in
  target-setup)    target_setup "$@" ;;
  drive-delay)     drive_delay "$@" ;;
  link-delay)      link_delay "$@" ;;
  target-status)   target_status "$@" ;;
  bio-disk)        nullb_create "$1" "$2" "$3" 0; say "/dev/$1: bio mode, $(nullb_desc "$1")" ;;
  namespace-add)   namespace_add "$@" ;;
  namespace-remove) namespace_remove "$@" ;;
  host-connect)    host_connect "$@" ;;
  host-devices)    host_devices "$@" ;;
  host-rescan)     host_rescan "$@" ;;
  host-busy)       host_busy "$@" ;;
  host-disconnect) nvme disconnect -n "$1" >&2 ;;
  *) die "tbctl.sh: unknown command '$cmd'" ;;
esac
