# Sourced by the SPDK scripts: configures a running nvmf_tgt as the tests' target, an NVMe/TCP or
# NVMe/RDMA subsystem whose one namespace is a malloc bdev behind a delay bdev of a known latency
# (every I/O, reads and writes: average = p99). In-capsule data up to 4 KiB, so larger writes go
# through R2T (TCP) or an RDMA READ of the host's buffer (RDMA).
# Also starts that target on this machine, and stops what a script started when it exits.
#
#   write_delay_target_rpcs FILE MALLOC_MB DELAY_US NQN SERIAL TRANSPORT ADDRESS PORT
# writes the configuration into FILE as scripts/rpc.py's batch input (one call a line, on its stdin):
# one rpc.py run for all of it, since each rpc.py takes 1-2 s to start beside a polling reactor
# (more under emulation). TRANSPORT: tcp or rdma.
write_delay_target_rpcs() {
  local file=$1 malloc_mb=$2 delay_us=$3 nqn=$4 serial=$5 transport=$6 address=$7 port=$8
  case $transport in tcp|rdma) ;; *) echo "write_delay_target_rpcs: transport tcp or rdma, not $transport" >&2; return 2 ;; esac
  local TRANSPORT=${transport^^}
  cat >"$file" <<RPCS
framework_wait_init
nvmf_create_transport -t $TRANSPORT -u 8192 -q 128 -c 4096
bdev_malloc_create -b Malloc0 $malloc_mb 4096
bdev_delay_create -b Malloc0 -d Delay0 -r $delay_us -t $delay_us -w $delay_us -n $delay_us
nvmf_create_subsystem $nqn -a -s $serial
nvmf_subsystem_add_ns $nqn Delay0
nvmf_subsystem_add_listener $nqn -t $transport -a $address -s $port
RPCS
}

# The processes a script started (PIDs in pids): `trap stop_started_processes EXIT` stops them,
# SIGINT first (an agent finishes its file), SIGKILL a second later.
pids=()
stop_started_processes() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}

#   start_local_delay_target SPDK_TREE OUT_DIR MALLOC_MB DELAY_US NQN SERIAL PORT
# nvmf_tgt on core 0 of this machine (no hugepages, no PCI; its log OUT_DIR/nvmf_tgt.log, its RPC
# socket OUT_DIR/spdk.sock), configured as above for NVMe/TCP on 127.0.0.1:PORT. Sets tgt_pid and
# adds it to pids.
start_local_delay_target() {
  local spdk=$1 out=$2 malloc_mb=$3 delay_us=$4 nqn=$5 serial=$6 port=$7
  "$spdk/build/bin/nvmf_tgt" -m 0x1 -s 1024 --no-pci --iova-mode va -r "$out/spdk.sock" \
    --env-context="--no-huge --legacy-mem" >"$out/nvmf_tgt.log" 2>&1 &
  tgt_pid=$!
  pids+=("$tgt_pid")
  for _ in $(seq 1 300); do [ -S "$out/spdk.sock" ] && break; sleep 0.1; done
  write_delay_target_rpcs "$out/setup.rpc" "$malloc_mb" "$delay_us" "$nqn" "$serial" tcp 127.0.0.1 "$port"
  python3 "$spdk/scripts/rpc.py" -s "$out/spdk.sock" >/dev/null <"$out/setup.rpc"
}
