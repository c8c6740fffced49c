#!/bin/bash
# control_plane_scenarios.sh - the control plane across machines, in a running test bed booted with
# `tb up --systemd`: ntprof-collector on this machine (TLS, a throw-away CA), ntprofd installed in
# both VMs from its Debian package (`tb install-deb`: the binary, the unit systemd/ntprofd.service,
# Type=notify, least privilege, the ntprof group) dialing it at 10.0.2.2 (qemu user networking),
# sessions driven by ntprofctl:
#   1. both agents come up under systemd, READY, with exactly the unit's capabilities, and connect;
#   2. a session on host + target: fio on the host, `watch` shows it within 2 s, the report joins host
#      and target records and equals the file report of the session exported to .ntp files;
#   3. the host's agent SIGKILLed mid-session: systemd restarts it, it rejoins, records again, and
#      the report notes the interval it lost;
#   4. the collector SIGKILLed mid-session and restarted: the agents replay, every record once;
#   5. the collector restarted with a standing session (1 in 100): both agents record it, `watch`
#      with no name follows it, and an investigation at 1 in 10 runs beside it on the same agents:
#      of the commands the standing session kept while the investigation ran, every one is in the
#      investigation too (nested sampling, one record shared), about a tenth of them;
#   6. `ntprofctl run` around fio, gated against a baseline run: 2 ms more drive delay fails a
#      +1 ms bound on storage's mean and passes the same bound on network's (JUnit: one failure,
#      one pass).
#      (A p99 needs 1,000 commands in each run: the gate says "undecided" for fewer.)
# Each check prints "ok:"/"FAIL:"; exit 1 if any failed.
# Usage: control_plane_scenarios.sh NTPROFCTL NTPROF_COLLECTOR NTPROFD_DEB [PORT]
#   (NTPROFD_DEB: the ntprofd package, <build>/packages/ntprofd_*.deb of the package-deb target)
set -uo pipefail
ctl=$1 collector=$2 deb=$3 port=${4:-$((${NTPROF_TB_PORT_BASE:-22600} + 50))}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tb=$repo/deploy/testbed/tb
eval "$("$tb" env)"
out=$NTPROF_TB_SHARE/out/control-plane
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d /tmp/ntprof-cp.XXXXXX)
run=$(date +%H%M%S)  # session names are new in every run: the journals are checked for them
collector_pid=""
failures=0
check() {  # DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
cleanup() {
  for vm in host target; do "$tb" ssh "$vm" "systemctl stop ntprofd" >/dev/null 2>&1; done
  [ -n "$collector_pid" ] && kill "$collector_pid" 2>/dev/null && wait "$collector_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
wait_for() {  # SECONDS COMMAND...: true once COMMAND succeeds
  local t=$1; shift
  for _ in $(seq "$t"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  return 1
}

# ---- a CA, and a collector certificate for the address the VMs dial -------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ntprof-test-ca \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=ntprof-collector \
  -keyout "$work/collector.key" -out "$work/collector.csr" 2>/dev/null
printf 'subjectAltName=IP:10.0.2.2,IP:127.0.0.1,DNS:localhost\n' >"$work/san.ext"
openssl x509 -req -in "$work/collector.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
  -CAcreateserial -days 2 -extfile "$work/san.ext" -out "$work/collector.pem" 2>/dev/null
cp "$work/ca.pem" "$out/ca.pem"

export NTPROF_COLLECTOR=127.0.0.1:$port
ctl_tls=(--tls-ca "$work/ca.pem")
start_collector() {  # [EXTRA COLLECTOR FLAGS...]
  "$collector" --listen "127.0.0.1:$port" --tls-cert "$work/collector.pem" \
    --tls-key "$work/collector.key" --data-dir "$work/data" --metrics-listen "" "$@" \
    >>"$out/collector.log" 2>&1 &
  collector_pid=$!
  wait_for 10 "$ctl" status "${ctl_tls[@]}"
}
connected() {  # NAME ROLE
  "$ctl" status "${ctl_tls[@]}" | grep -q "^  $1 .*$2 .*from"
}
check "collector serves TLS on 127.0.0.1:$port" start_collector

# ---- 1. the package and its unit in both VMs ---------------------------------------------------
check "dpkg -i ${deb##*/} in both VMs" "$tb" install-deb "$deb"
for vm in target host; do
  # A fresh spool: messages of an earlier run's sessions would be unknown to this collector.
  "$tb" ssh "$vm" "set -e
    systemctl stop ntprofd 2>/dev/null || true
    rm -rf /var/lib/ntprofd/spool /etc/systemd/system/ntprofd.service
    [ -x /usr/sbin/ntprofd ] && [ -f /lib/systemd/system/ntprofd.service ] && getent group ntprof
    mkdir -p /etc/ntprof && cp /mnt/host/out/control-plane/ca.pem /etc/ntprof/ca.pem
    echo 'NTPROFD_ARGS=\"--role $vm --agent-name tb-$vm --collector 10.0.2.2:$port --collector-tls-ca /etc/ntprof/ca.pem\"' >/etc/default/ntprofd
    systemctl daemon-reload
    systemctl start ntprofd" >"$out/start-$vm.log" 2>&1
  check "$vm: systemctl start ntprofd (Type=notify: READY after the hooks attached)" \
    "$tb" ssh "$vm" "systemctl is-active --quiet ntprofd"
  check "$vm: the agent connects to the collector" wait_for 30 connected "tb-$vm" "$vm"
  caps=$("$tb" ssh "$vm" 'grep CapEff /proc/$(systemctl show -p MainPID --value ntprofd)/status')
  echo "      $vm: ntprofd $caps ($(capsh --decode="${caps##*:}" 2>/dev/null | sed 's/.*=//'))"
  # bpf, perfmon, sys_admin (module BTF), chown: nothing else (not even dac_override, setuid ...).
  check "$vm: ntprofd has exactly the unit's capabilities" \
    bash -c "[ \$(( 0x${caps##*[[:space:]]} )) = \$(( (1 << 39) | (1 << 38) | (1 << 21) | (1 << 0) )) ]"
  check "$vm: socket /run/ntprofd/ntprofd.sock mode 660 group ntprof" \
    "$tb" ssh "$vm" '[ "$(stat -c %a:%G /run/ntprofd/ntprofd.sock)" = 660:ntprof ]'
done

dev=$("$tb" dev 1)
fio_run() {  # SECONDS
  "$tb" ssh host "fio --name=f --filename=$dev --direct=1 --ioengine=io_uring --rw=randread \
    --bs=4k --iodepth=1 --time_based --runtime=$1 >/dev/null 2>&1"
}
session_settled() {  # NAME: stopped and no agent has a recording marker left
  ! "$tb" ssh host "ls /var/lib/ntprofd/spool/*.recording" >/dev/null 2>&1 &&
    ! "$tb" ssh target "ls /var/lib/ntprofd/spool/*.recording" >/dev/null 2>&1
}
report() {  # NAME -> $out/NAME.txt
  "$ctl" report "$1" "${ctl_tls[@]}" >"$out/$1.txt" 2>&1
}
recording() {  # VM SESSION: its journal says it records the session (since the last start)
  "$tb" ssh "$1" "journalctl -u ntprofd -b --no-pager | grep -q 'session $2: recording'"
}

# ---- 2. one session on both ------------------------------------------------------------------------
"$ctl" start base-$run -s 10 "${ctl_tls[@]}" >"$out/start-base.txt" 2>&1
check "session base starts on both agents" grep -q "tb-target" "$out/start-base.txt"
check "both agents record base" wait_for 60 bash -c "$(declare -f recording); tb=$tb; recording host base-$run && recording target base-$run"
# watch the session live, each line stamped with when it arrived here
"$ctl" watch "base-$run" -o ndjson "${ctl_tls[@]}" 2>"$out/watch.err" |
  while IFS= read -r line; do echo "$(date +%s.%N) $line"; done >"$out/watch.ndjson" &
watch_pid=$!
sleep 2
# dd starts reading within milliseconds of the "go" line (fio's start-up takes ~1 s under TCG):
# io_start is when "go" reached this machine
"$tb" ssh host "echo go; exec timeout 8 dd if=$dev of=/dev/null bs=4k iflag=direct" 2>/dev/null |
  { read -r _; date +%s.%N >"$out/io_start"; cat >/dev/null; }
io_start=$(cat "$out/io_start")
pkill -f "ntprofctl watch base-$run"; wait "$watch_pid" 2>/dev/null
first=$(awk '/"groups":\[\{/ {print $1; exit}' "$out/watch.ndjson")
delay=$(awk -v a="${first:-0}" -v b="$io_start" 'BEGIN {printf "%.2f", a - b}')
check "watch: first line with the session's I/O ${delay} s after the I/O started (<= 2 s)" \
  awk -v a="${first:-0}" -v b="$io_start" 'BEGIN {exit !(a > b && a - b <= 2)}'
"$ctl" stop base-$run "${ctl_tls[@]}" >/dev/null
wait_for 30 session_settled
report base-$run
sed -n 's/^records: /      base: records: /p' "$out/base-$run.txt"
check "base: host and target records joined" grep -Eq "records: [1-9][0-9]* host, [1-9][0-9]* target; [1-9][0-9]* matched" "$out/base-$run.txt"
# the file-based report of the same run: the session exported to .ntp files, read with no server
"$ctl" export base-$run -o "$out/base-export/" "${ctl_tls[@]}" >/dev/null 2>&1
"$ctl" report "$out/base-export/" >"$out/base-file.txt" 2>&1
check "base: ntprofctl report of the exported .ntp files = the session's report" \
  diff "$out/base-$run.txt" "$out/base-file.txt"

# ---- 3. the host agent killed; systemd restarts it ------------------------------------------------
"$ctl" start restart-$run -s 10 "${ctl_tls[@]}" >/dev/null
wait_for 60 bash -c "$(declare -f recording); tb=$tb; recording host restart-$run && recording target restart-$run"
fio_run 4
"$tb" ssh host "systemctl kill -s KILL ntprofd"
check "systemd restarts the killed agent (Restart=on-failure)" \
  wait_for 60 "$tb" ssh host "systemctl is-active --quiet ntprofd && journalctl -u ntprofd -b --no-pager | grep -c 'session restart-$run: recording' | grep -q 2"
fio_run 4
"$ctl" stop restart-$run "${ctl_tls[@]}" >/dev/null
wait_for 30 session_settled
report restart-$run
sed -n 's/^records: /      restart: records: /p; s/^note: /      restart: note: /p' "$out/restart-$run.txt"
check "restart: the report notes the lost interval" \
  grep -q "tb-host lost batches .*agent restarted while recording session restart-$run" "$out/restart-$run.txt"
check "restart: host and target records joined" grep -Eq "[1-9][0-9]* matched" "$out/restart-$run.txt"

# ---- 4. the collector killed mid-session -----------------------------------------------------------
"$ctl" start outage-$run -s 10 "${ctl_tls[@]}" >/dev/null
wait_for 60 bash -c "$(declare -f recording); tb=$tb; recording host outage-$run && recording target outage-$run"
fio_run 3
kill -9 "$collector_pid"; wait "$collector_pid" 2>/dev/null
fio_run 4   # spooled in both VMs
check "collector restarted" start_collector
check "both agents reconnect" wait_for 30 bash -c "$(declare -f connected); ctl=$ctl; ctl_tls=(${ctl_tls[*]}); connected tb-host host && connected tb-target target"
fio_run 3
"$ctl" stop outage-$run "${ctl_tls[@]}" >/dev/null
wait_for 30 session_settled
report outage-$run
"$ctl" status "${ctl_tls[@]}" >"$out/status.txt"
sed -n 's/^records: /      outage: records: /p' "$out/outage-$run.txt"
grep "acked seq" "$out/status.txt" | sed 's/^/     /'
# Ground truth: what each agent recorded, from its journal ("session outage: ..., N records").
recorded() {  # VM
  "$tb" ssh "$1" "journalctl -u ntprofd -b --no-pager" | sed -n "s/.*session outage-$run: .*, \([0-9]*\) records in.*/\1/p" | tail -1
}
h=$(recorded host) t=$(recorded target)
echo "      outage: the agents recorded $h host and $t target records"
check "outage: host and target records joined" grep -Eq "[1-9][0-9]* matched" "$out/outage-$run.txt"
check "outage: the report holds every record once ($h host, $t target)" \
  grep -q "records: $h host, $t target;" "$out/outage-$run.txt"
check "outage: nothing declared lost" bash -c "! grep -q 'lost batches' '$out/outage-$run.txt'"

# ---- 5. a standing session, and an investigation beside it ------------------------------------------
kill "$collector_pid"; wait "$collector_pid" 2>/dev/null
check "collector restarted with standing session fleet-$run (1 in 100)" \
  start_collector --standing-session "fleet-$run" --standing-sample-rate 100
check "both agents record the standing session" wait_for 60 bash -c "$(declare -f recording); tb=$tb; recording host fleet-$run && recording target fleet-$run"
"$ctl" start probe-$run -s 10 "${ctl_tls[@]}" >"$out/start-probe.txt" 2>&1
check "investigation probe (1 in 10) starts beside it on both agents" \
  wait_for 60 bash -c "$(declare -f recording); tb=$tb; recording host probe-$run && recording target probe-$run"
"$ctl" watch -o ndjson --count 3 "${ctl_tls[@]}" >"$out/watch-standing.ndjson" 2>&1 &
watch_pid=$!
fio_run 6
wait "$watch_pid"
check "watch with no name follows the standing session" grep -q "\"session\":\"fleet-$run\"" "$out/watch-standing.ndjson"
"$ctl" status "${ctl_tls[@]}" >"$out/status-both.txt"
check "status: both sessions running" bash -c "grep -q 'fleet-$run.*running' '$out/status-both.txt' && grep -q 'probe-$run.*running' '$out/status-both.txt'"
"$ctl" stop probe-$run "${ctl_tls[@]}" >/dev/null
probe_settled() { ! "$tb" ssh host "ls /var/lib/ntprofd/spool/probe-$run.recording" && ! "$tb" ssh target "ls /var/lib/ntprofd/spool/probe-$run.recording"; }
wait_for 30 probe_settled
report probe-$run
sed -n 's/^records: /      probe: records: /p' "$out/probe-$run.txt"
check "probe: host and target records joined" grep -Eq "[1-9][0-9]* matched" "$out/probe-$run.txt"
check "fleet keeps running after the investigation stopped" bash -c "'$ctl' status fleet-$run ${ctl_tls[*]} | grep -q running"
"$ctl" export probe-$run -o "$out/probe-export/" "${ctl_tls[@]}" >/dev/null 2>&1
"$ctl" export fleet-$run -o "$out/fleet-export/" "${ctl_tls[@]}" >/dev/null 2>&1
keys=$(dirname "$ctl")/../daemon/ntp_command_keys
"$keys" "$out"/probe-export/*.ntp | LC_ALL=C sort >"$out/probe.keys"
"$keys" "$out"/fleet-export/*.ntp | LC_ALL=C sort >"$out/fleet.keys"
# the standing session's commands while the investigation ran (its first to its last stamp, per role)
awk 'NR == FNR { lo[$1] = (!($1 in lo) || $5 < lo[$1]) ? $5 : lo[$1]; hi[$1] = $5 > hi[$1] ? $5 : hi[$1]; next }
     ($1 in lo) && $5 >= lo[$1] && $5 <= hi[$1]' "$out/probe.keys" "$out/fleet.keys" >"$out/fleet-during.keys"
in_probe=$(wc -l <"$out/probe.keys") in_fleet=$(wc -l <"$out/fleet-during.keys")
missing=$(LC_ALL=C comm -23 "$out/fleet-during.keys" "$out/probe.keys" | wc -l)
echo "      nested: probe kept $in_probe records, fleet $in_fleet in the same span, $missing of them not in probe"
check "nested: every command the standing session kept meanwhile is in the investigation" \
  bash -c "[ $in_fleet -gt 0 ] && [ $missing = 0 ]"
check "nested: the standing session kept about a tenth of the investigation's (5-20 %)" \
  awk -v a="$in_fleet" -v b="$in_probe" 'BEGIN {exit !(b > 0 && a / b >= 0.05 && a / b <= 0.2)}'

# ---- 6. ntprofctl run around fio, gated against a baseline ------------------------------------------
fio_cmd=("$tb" ssh host "fio --name=f --filename=$dev --direct=1 --ioengine=io_uring --rw=randread --bs=4k --iodepth=1 --time_based --runtime=5 >/dev/null 2>&1")
# Both runs wait on the drive (2 ms, then 4 ms): under emulation a VM runs CPU work slower after an
# idle wait, which would otherwise raise network too (run-scenarios.sh, delay_base_us).
"$tb" set-drive-delay 2000000 >/dev/null 2>&1
"$ctl" run gate-base-$run -s 2 "${ctl_tls[@]}" -- "${fio_cmd[@]}" >"$out/gate-base.txt" 2>&1
base_status=$?
check "run: the baseline run exits 0 with its report" \
  bash -c "[ $base_status = 0 ] && grep -Eq '[1-9][0-9]* matched' '$out/gate-base.txt'"
"$tb" set-drive-delay 4000000 >/dev/null 2>&1
"$ctl" run gate-new-$run -s 2 "${ctl_tls[@]}" --baseline gate-base-$run \
  --fail-if 'storage.mean > +1000us' --fail-if 'network.mean > +1000us' --junit "$out/gate.xml" \
  -- "${fio_cmd[@]}" >"$out/gate-new.txt" 2>&1
gate_status=$?
"$tb" set-drive-delay 0 >/dev/null 2>&1
sed -n '/^gate/,$p' "$out/gate-new.txt" | sed 's/^/      /'
check "run: 2 ms more drive delay crosses the storage bound (exit 1)" [ "$gate_status" = 1 ]
check "run: JUnit names storage.mean failed and network.mean passed" \
  python3 -c "
import sys, xml.etree.ElementTree as ET
cases = {c.get('name'): c.find('failure') is not None for c in ET.parse(sys.argv[1]).iter('testcase')}
storage = [f for n, f in cases.items() if n.startswith('storage.mean')]
network = [f for n, f in cases.items() if n.startswith('network.mean')]
sys.exit(not (storage and all(storage) and network and not any(network)))" "$out/gate.xml"

[ "$failures" = 0 ] && echo "all control-plane scenarios passed"
[ "$failures" = 0 ]
