# Sourced by the test bed's SPDK scenarios (the bed up, ntprofd shared; $tb, $out, $guest_out, $rate
# and $salt set by the caller): SPDK's files copied into a VM, hugepages, and ntprofd agents in the
# VMs.

# stage_spdk VM SPDK_TREE FILE...: FILEs of the tree (relative, e.g. build/lib) into the VM's own
# disk under /opt/spdk (not run from 9p), once per content.
stage_spdk() {
  local vm=$1 spdk=$2; shift 2
  local stage=$NTPROF_TB_SHARE/spdk-$vm sum
  sum=$(cd "$spdk" && find "$@" -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)
  if "$tb" ssh "$vm" "[ \"\$(cat /opt/spdk/.sum 2>/dev/null)\" = $sum ]"; then return 0; fi
  rm -rf "$stage"; mkdir -p "$stage"
  tar -C "$spdk" -czf "$stage/spdk.tgz" "$@"
  "$tb" ssh "$vm" "rm -rf /opt/spdk && mkdir -p /opt/spdk && tar -xzf /mnt/host/${stage##*/}/spdk.tgz -C /opt/spdk &&
      echo $sum >/opt/spdk/.sum"
}

# hugepages VM N: N 2 MiB hugepages in the VM (0 gives them back), hugetlbfs mounted. SPDK over
# RDMA needs them: SPDK registers its memory with the RDMA device in 2 MiB-aligned regions and
# translates every buffer through that map, while DPDK's --no-huge memory is only 4 KiB-aligned
# ("spdk_rdma_get_translation: No translation", then "Unable to allocate resources for shared
# receive queue").
hugepages() {
  "$tb" ssh "$1" "echo $2 >/proc/sys/vm/nr_hugepages
      mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages; }
      got=\$(cat /proc/sys/vm/nr_hugepages); [ \$got -ge $2 ] || { echo \"$1: only \$got of $2 hugepages\"; exit 1; }"
}

# start_agent VM NAME ARGS...: ntprofd record in the VM, launched; wait_ready says when it records
start_agent() {
  local vm=$1 name=$2; shift 2
  "$tb" ssh "$vm" "setsid /mnt/host/bin/ntprofd record -s $rate --salt $salt -i 1 $* \
      -o $guest_out/$name.ntp >$guest_out/$name.log 2>&1 </dev/null & echo \$! >/run/ntprofd-$name.pid"
}
wait_ready() {  # NAME
  for _ in $(seq 1 360); do grep -q "recording" "$out/$1.log" 2>/dev/null && return 0; sleep 0.5; done
  echo "ntprofd ($1) did not start:"; cat "$out/$1.log"; return 1
}
stop_agent() {  # VM NAME: SIGINT, until the agent has written its file
  "$tb" ssh "$1" "p=\$(cat /run/ntprofd-$2.pid); kill -INT \$p; for i in \$(seq 1 120); do
      kill -0 \$p 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
}
