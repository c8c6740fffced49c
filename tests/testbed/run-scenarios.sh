#!/bin/bash
# run-scenarios.sh BUILD_DIR - the end-to-end tests on real NVMe/TCP and NVMe/RDMA traffic in the two-VM test bed,
# each checked against ground truth (tests/testbed/check_run.py), on each guest kernel of
# NTPROF_SCENARIO_KERNELS (default "6.1 6.12": Debian 12's own kernel, and the 6.12 kernel whose
# NVMe/TCP drivers send with sock_sendmsg). One boot of the VMs per kernel serves all its
# scenarios. Prints "N passed, M failed" last.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
tb=$repo/deploy/testbed/tb
record=$repo/deploy/testbed/record-run.sh
check="$repo/tests/testbed/check_run.py $build/client/ntprofctl"
export NTPROF_BUILD_DIR=$build
runtime=${NTPROF_SCENARIO_RUNTIME:-30}
drive_delay_us=${NTPROF_SCENARIO_DRIVE_US:-10000}
link_delay_us=${NTPROF_SCENARIO_LINK_US:-10000}
# A delay is checked as the difference of two runs that both wait: one at this base delay, one at
# base + the delay. Under emulation the VMs run every command's CPU work 2-16x slower after they
# sat idle through a wait (measured on the target driver's response path, 19 -> 298 us, and in the
# network stacks, 6.1 and 6.12 alike), so a baseline without any wait would charge that slowdown
# to the stages after the wait; with both runs waiting it cancels (6.1, 4 KiB reads: network +1.5 ms
# from 0 to 10 ms drive delay, +0.4 ms from 5 to 15 ms).
delay_base_us=${NTPROF_SCENARIO_DELAY_BASE_US:-5000}
kernels=${NTPROF_SCENARIO_KERNELS:-6.1 6.12}
only=${NTPROF_SCENARIO_ONLY:-}   # an extended regex: run only the scenarios whose name matches

# One boot for both transports: a subsystem over NVMe/TCP and one over NVMe/RDMA (soft-RoCE), on
# the same null_blk drives.
# systemd as init: the control-plane scenarios run ntprofd as its systemd unit.
boot_testbed() { "$tb" up --kernel "$kernel" --systemd --transport tcp,rdma && eval "$("$tb" env)"; }
# qemu's VM-to-VM link can die for good under TCG (see `tb link-check`): a fault of the test bed,
# not of ntprof. It is checked before each scenario, and a scenario that failed on a dead link runs
# once more on a fresh boot; both are said in the output.
reboot_testbed() {
  echo "--- test bed: a VM or the VM-to-VM link is dead; rebooting both VMs"
  "$tb" down >/dev/null 2>&1
  boot_testbed
}

# A scenario that hangs (a guest kernel that died under I/O, or a VM-to-VM link that died mid-run,
# leaves the other side's commands waiting) is stopped after this long, so CI reports it or reruns
# it instead of running out of time. The longest scenario takes under 3 minutes on a quiet machine
# (the opt-in SPDK RDMA pairs 4-6 on a loaded one); a link that died mid-run cost CI the whole
# wait (900 s before), so 10 minutes.
scenario_timeout=${NTPROF_SCENARIO_TIMEOUT:-600}
in_time() {  # COMMAND...: an exported function or a program, killed after scenario_timeout
  timeout -k 30 "$scenario_timeout" bash -c '"$@"' _ "$@"
  local rc=$?
  [ $rc = 124 ] && echo "--- stopped after ${scenario_timeout} s"
  return $rc
}
# What a guest kernel said when it died: printed in full, never hidden by the rerun below.
guest_crash_report() {
  local role
  for role in target host; do
    if "$tb" log $role 2>/dev/null | grep -qE 'Kernel panic|Oops:|BUG:'; then
      echo "--- test bed: the $role VM's kernel crashed ($("$tb" status 2>/dev/null | grep "^$role:" | cut -c1-60)):"
      "$tb" log $role | grep -E -A12 'Oops:|BUG:' | head -40
      "$tb" log $role | grep -E 'Kernel panic' | head -2
    fi
  done
}

passed=0
failed=0
scenario() {  # NAME COMMAND...: one scenario passes when its command exits 0
  local name="[$kernel] $1"; shift
  [[ -z $only || $name =~ $only ]] || return 0
  echo "--- scenario: $name"
  "$tb" link-check >/dev/null || reboot_testbed
  local started=$SECONDS
  if in_time "$@"; then passed=$((passed + 1)); echo "--- $name: passed in $((SECONDS - started)) s"; return; fi
  if ! "$tb" link-check >/dev/null; then
    guest_crash_report
    if reboot_testbed; then
      echo "--- $name: failed on a dead VM or VM-to-VM link; running it once more"
      if in_time "$@"; then passed=$((passed + 1)); echo "--- $name: passed (second boot) in $((SECONDS - started)) s"; return; fi
    fi
  fi
  failed=$((failed + 1)); echo "--- $name: FAILED after $((SECONDS - started)) s"
}

run_and_check() {  # NAME [record-run args...]
  local name=$1; shift
  "$record" "$name" --runtime "$runtime" "$@" >/dev/null && $check consistent "$out/$name"
}

# The I/O classes, one after the other in one recording per transport (fio stonewall): 4 KiB and
# 128 KiB reads and writes at QD1 (TCP: in-capsule writes, R2T writes, multi-PDU reads; RDMA:
# inline writes, RDMA READ writes, RDMA WRITE reads). Each again with a drive delay and a link delay.
class_runtime=${NTPROF_SCENARIO_CLASS_RUNTIME:-8}
classes="--iodepth=1 --name=read4k --rw=randread --bs=4k --name=write4k --stonewall --rw=randwrite --bs=4k
  --name=read128k --stonewall --rw=randread --bs=128k --name=write128k --stonewall --rw=randwrite --bs=128k"
record_classes() {  # NAME TRANSPORT
  "$record" "$1" --transport "$2" --runtime "$class_runtime" -s 1 -- $classes >/dev/null
}
classes_run() {  # TRANSPORT
  record_classes "classes-$1$k" "$1" && $check classes "$out/classes-$1$k"
}
set_delay_us() {  # drive|link MICROSECONDS
  case $1 in
    drive) "$tb" set-drive-delay $(($2 * 1000)) ;;
    link) "$tb" set-link-delay "$2" ;;
  esac >/dev/null 2>&1
}
delay_run() {  # drive|link TRANSPORT STAGE MICROSECONDS: the classes at the base delay and at base +
  # MICROSECONDS; STAGE must have moved by MICROSECONDS between them, and no other stage
  local base=$1-base-$2$k delayed=$1-$2$k
  set_delay_us "$1" "$delay_base_us" && record_classes "$base" "$2" && $check consistent "$out/$base" &&
    set_delay_us "$1" $((delay_base_us + $4)) && record_classes "$delayed" "$2" &&
    $check consistent "$out/$delayed" && $check shift "$out/$base" "$out/$delayed" "$3" "$4" --classes
  local rc=$?
  set_delay_us "$1" 0
  return $rc
}
side_by_side() {  # docs/measurements.md's table: the same workload over both transports
  "$build/client/ntprofctl" compare "$out/classes-tcp$k" "$out/classes-rdma$k" > "$out/compare-tcp-rdma$k.txt" &&
    cat "$out/compare-tcp-rdma$k.txt"
}

# ntprofd probe on the real kernel: every role and transport can attach, and both NVMe/TCP sides
# see their PDUs leave in the skbs queued to the device (net_dev_queue), the same on every kernel:
# no socket send call is hooked (they changed in Linux 6.5). The output is kept in
# <share>/out/probe-KERNEL.txt (docs/hooks.md shows it).
probe_vm() {  # VM FILE: VM's plans for both transports into FILE, then its NVMe/TCP transmit hook
  local vm=$1 f=$2 t
  : > "$f"
  for t in tcp rdma; do
    echo "### $vm, $t (kernel $("$tb" ssh $vm uname -r))" >> "$f"
    "$tb" ssh $vm "/mnt/host/bin/ntprofd probe --role $vm --transport $t" >> "$f" 2>&1 || {
      echo "FAIL: ntprofd probe --role $vm --transport $t (see $f)"; return 1; }
  done
  "$tb" ssh $vm "/mnt/host/bin/ntprofd probe --role $vm --transport tcp --json" |
    python3 -c 'import json, sys
plan = json.load(sys.stdin)
chosen = {h["hook"]: h["chosen"] for h in plan["hooks"] if h["chosen"]}
print("'$vm' NVMe/TCP transmit hook:", chosen.get("net_dev_queue"))
sends = {"kernel_sendpage", "kernel_sendmsg", "sock_sendmsg"} & set(chosen)
sys.exit(0 if plan["ready"] and "net_dev_queue" in chosen and not sends else 1)' ||
    { echo "FAIL: $vm does not see its NVMe/TCP PDUs at net_dev_queue"; return 1; }
  # a program of ours the kernel's verifier refuses is a defect even where a fallback attaches
  # (6.12 types module tracepoint arguments as maybe-NULL: a missing check falls back to raw_tp)
  if grep -n "rejected by the verifier" "$f"; then
    echo "FAIL: $vm's verifier refused a program (see $f)"; return 1
  fi
}
probe_run() {  # both VMs at once (each probe loads BPF under TCG for seconds), host's plans first
  local f=$out/probe$k.txt rc=0
  probe_vm host "$f.host" > "$f.host.out" & local host_probe=$!
  probe_vm target "$f.target" || rc=1
  wait $host_probe || rc=1
  cat "$f.host.out"
  cat "$f.host" "$f.target" > "$f" && rm -f "$f.host" "$f.target" "$f.host.out"
  return $rc
}

# probe_run's plans of TRANSPORT (both roles) on this kernel and on the first kernel of the run are
# the same: same hooks, same attach types. False on the first kernel itself, or without its probe.
same_plan_as_first_kernel() {  # TRANSPORT
  local first=${kernels%% *}
  [ "$kernel" != "$first" ] && [ -s "$out/probe-$first.txt" ] && [ -s "$out/probe$k.txt" ] &&
    diff -q <(plan_of "$1" "$out/probe-$first.txt") <(plan_of "$1" "$out/probe$k.txt") >/dev/null
}
plan_of() {  # TRANSPORT PROBE_FILE: the hook plan lines of both roles, without the kernel's name
  awk -v t="$1" '/^### / {keep = ($3 == t)} keep && !/^### /' "$2"
}

# The full set on Debian 12's 6.1; on 6.12 (Linux >= 6.5, where NVMe/TCP sends with sock_sendmsg)
# the hook choice, the four I/O classes on both transports, the delays of a transport whose hook
# plan differs from 6.1's, and QD8 over TCP. Recordings land in <share>/out/NAME-KERNEL.
run_kernel_scenarios() {
  local t
  scenario "probe: every role and transport attaches, NVMe/TCP PDUs seen at the device" probe_run
  if [ "$kernel" = 6.1 ]; then
    # The baseline and the delay runs sample every command (-s 1): then each command carries the
    # same probes, and the kernel's own block accounting is ground truth for the end to end.
    scenario "baseline 4KiB randread QD1 over TCP, end to end vs the block layer's accounting" bash -c "
      '$record' baseline$k --runtime $runtime -s 1 >/dev/null && $check consistent '$out/baseline$k' --latency"
  fi
  for t in tcp rdma; do
    scenario "$t: four I/O classes, 100 % matched, stages > 0 and summing to end to end" classes_run $t
  done
  # The delay checks prove where each hook's stamp sits. On a later kernel they run for a
  # transport only when its hook plan there differs from the first kernel's (today neither does:
  # NVMe/TCP's PDUs are seen at net_dev_queue on both, NVMe/RDMA's functions are unchanged): the
  # same hooks on the same events would check the same thing twice, at 5 minutes a transport. The
  # four I/O classes still run on every kernel, so a kernel's own structures (6.12's skb fragments)
  # are checked against every record.
  local delayed=""
  for t in tcp rdma; do same_plan_as_first_kernel $t || delayed="$delayed $t"; done
  for t in $delayed; do
    scenario "$t: drive delay +${drive_delay_us} us (over ${delay_base_us}) lands in storage, every class" \
      delay_run drive $t storage "$drive_delay_us"
  done
  for t in $delayed; do
    scenario "$t: link delay +${link_delay_us} us (over ${delay_base_us}) lands in network, every class (twice for R2T / RDMA READ writes)" \
      delay_run link $t network "$link_delay_us"
  done
  for t in tcp rdma; do
    [[ " $delayed " == *" $t "* ]] ||
      echo "--- [$kernel] $t: delay checks not rerun: its hook plan is the same as on ${kernels%% *} (out/probe$k.txt)"
  done
  set_delay_us drive 0; set_delay_us link 0  # also after a run stopped by its time limit
  scenario "4KiB randread QD8 over TCP" run_and_check qd8$k -s 10 -- --rw=randread --bs=4k --iodepth=8
  if [ "$kernel" = 6.1 ]; then
    scenario "TCP vs RDMA side by side (ntprofctl compare)" side_by_side
    scenario "4KiB randread QD8 over RDMA" run_and_check qd8-rdma$k -s 10 --transport rdma -- --rw=randread --bs=4k --iodepth=8
    scenario "faults: fio killed, agent SIGKILLed, controller disconnected, wrong role" \
      "$repo/tests/testbed/fault_scenarios.sh" "$build/client/ntprofctl"
    scenario "control plane: ntprofd from its .deb as a systemd unit, collector over TLS, sessions, watch, kills" \
      control_plane_from_deb
    # real SPDK in the target VM: only when tests/run.sh built it (NTPROF_SPDK_TREE)
    if [ -n "${NTPROF_SPDK_TREE:-}" ]; then
      scenario "mixed pair: SPDK nvmf_tgt (patched) in the target VM, the kernel NVMe/TCP host, each recorded by its own agent, joined" \
        "$repo/tests/testbed/spdk_mixed_scenarios.sh" "$NTPROF_SPDK_TREE" "$build/client/ntprofctl" tcp
    fi
    # SPDK over soft-RoCE, both ways, with each SPDK tree tests/run.sh built (v23.01.1, v25.09):
    # opt-in (about 5 minutes each under emulation, beyond CI's budget); docs/spdk.md, "SPDK over
    # NVMe/RDMA"
    if [ "${NTPROF_SPDK_RDMA:-0}" = 1 ]; then
      for spdk_tree in ${NTPROF_SPDK_TREE:-} ${NTPROF_SPDK25_TREE:-}; do
        v=$(awk '$1 == "#define" && $2 ~ /^SPDK_VERSION_(MAJOR|MINOR|PATCH)$/ { n[$2] = $3 }
            END { printf "%d.%02d", n["SPDK_VERSION_MAJOR"], n["SPDK_VERSION_MINOR"]
                  if (n["SPDK_VERSION_PATCH"]) printf ".%d", n["SPDK_VERSION_PATCH"] }' "$spdk_tree/include/spdk/version.h")
        scenario "mixed pair over RDMA: SPDK v$v nvmf_tgt (patched, hugepages) in the target VM, the kernel NVMe/RDMA host, joined" \
          "$repo/tests/testbed/spdk_mixed_scenarios.sh" "$spdk_tree" "$build/client/ntprofctl" rdma
        scenario "SPDK v$v perf (patched, hugepages) as the NVMe/RDMA host in the host VM, the kernel nvmet-rdma target, joined, against the drive delay" \
          "$repo/tests/testbed/spdk_host_rdma_scenarios.sh" "$spdk_tree" "$build/client/ntprofctl"
      done
    fi
    scenario "a user-space NVMe/TCP initiator (Python, plain sockets): host through libntprof_probe.so, target by the kernel agent, and the target agent alone" \
      "$repo/tests/testbed/userspace_initiator_scenarios.sh" "$build/client/ntprofctl" \
      "$build/probe/libntprof_probe.so.1"
    scenario "a bio-based namespace enabled mid-recording: the target attaches block_bio_queue for its T2, storage = its drive delay, detached when it goes" \
      "$repo/tests/testbed/bio_backend_scenario.sh" "$build/client/ntprofctl"
  fi
  if [ "${NTPROF_BENCH:-0}" = 1 ]; then
    echo "--- benchmark: agent overhead on kernel $kernel"
    "$repo/tests/bench/agent_overhead.sh"
  fi
}

# The agent comes from its Debian package, as an administrator installs it: a package that does
# not build fails this scenario with cmake's words, never runs an older .deb.
control_plane_from_deb() {
  local packaged=$(mktemp)
  if ! cmake --build "$build" --target package-deb >"$packaged" 2>&1; then
    tail -20 "$packaged"; rm -f "$packaged"
    echo "control plane: the package-deb target failed (above); no .deb to install"
    return 1
  fi
  rm -f "$packaged"
  "$repo/tests/testbed/control_plane_scenarios.sh" "$build/client/ntprofctl" \
    "$build/collector/ntprof-collector" "$(ls -t "$build"/packages/ntprofd_*.deb | head -1)"
}

# the scenarios run in child shells (in_time): they need these
export -f control_plane_from_deb run_and_check record_classes classes_run set_delay_us delay_run side_by_side probe_vm probe_run
export record check tb build repo runtime class_runtime classes delay_base_us

trap '"$tb" down >/dev/null 2>&1' EXIT
for kernel in $kernels; do
  echo "=== test bed on kernel $kernel"
  "$tb" down >/dev/null 2>&1
  if ! boot_testbed; then
    failed=$((failed + 1)); echo "--- [$kernel] boot: FAILED"; continue
  fi
  export out=$NTPROF_TB_SHARE/out k=-$kernel kernel
  run_kernel_scenarios
done
echo "test bed scenarios: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
