# Sourced by the SPDK scripts: configures a running nvmf_tgt as the tests' target, an NVMe/TCP
# subsystem whose one namespace is a malloc bdev behind a delay bdev of a known latency (every I/O,
# reads and writes: average = p99). In-capsule data up to 4 KiB, so larger writes go through R2T.
#
#   configure_delay_target RPC MALLOC_MB DELAY_US NQN SERIAL ADDRESS PORT
# RPC: the caller's function that runs one scripts/rpc.py call against its nvmf_tgt.
configure_delay_target() {
  local rpc=$1 malloc_mb=$2 delay_us=$3 nqn=$4 serial=$5 address=$6 port=$7
  $rpc framework_wait_init
  $rpc nvmf_create_transport -t TCP -u 8192 -q 128 -c 4096
  $rpc bdev_malloc_create -b Malloc0 "$malloc_mb" 4096
  $rpc bdev_delay_create -b Malloc0 -d Delay0 -r "$delay_us" -t "$delay_us" -w "$delay_us" -n "$delay_us"
  $rpc nvmf_create_subsystem "$nqn" -a -s "$serial"
  $rpc nvmf_subsystem_add_ns "$nqn" Delay0
  $rpc nvmf_subsystem_add_listener "$nqn" -t tcp -a "$address" -s "$port"
}
