#!/bin/bash
# A real Prometheus (Debian's server) scrapes a real ntprof-collector's /metrics every second,
# once over plaintext and once over TLS, while a session runs with agents streaming commands of
# known stage durations (paced_agent: its truth.txt). Through Prometheus' HTTP API, per stage,
#   histogram_quantile(0.5, sum by (le, stage) (rate(ntprof_stage_latency_seconds_bucket[..])))
# must fall in the histogram bucket that holds the known duration, the largest of the five stages
# must be the known largest (and the session report's), and the losses the agent declared must
# arrive as ntprof_agent_lost_records_total.
#   prometheus_scrape_test.sh NTPROFCTL NTPROF_COLLECTOR PACED_AGENT
set -uo pipefail
ctl=$1 collector=$2 paced=$3
prometheus=$(command -v prometheus) || {
  echo "FAIL: prometheus not found: deploy/install-deps.sh installs it (Debian package prometheus)"
  exit 1
}
# shellcheck source=harness.sh
source "$(dirname "$0")/harness.sh"
main_stages=(host_block host_driver network target_driver storage)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# query PROMQL: the API's result vector as "labels-of-interest value" lines.
query() {
  curl -sf --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
    jq -r '.data.result[] | "\(.metric.stage // .metric.cause // .metric.job // "-") \(.value[1])"'
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$deadline" ] || return 1; sleep 0.5; done
}

quantiles_ready() {
  query "$p50" >"$dir/p50.txt"
  local n
  n=$(grep -cvE ' (NaN|\+Inf)$' "$dir/p50.txt")
  [ "$n" -ge ${#main_stages[@]} ]
}

losses_arrived() {
  local expected
  expected=$(awk '$1 == "lost_records" {print $3}' "$dir/truth/truth.txt")
  [ "$(query 'ntprof_agent_lost_records_total{cause="ring_buffer_full"}' | awk '{print $2}')" = "$expected" ]
}

# run_mode plaintext|tls
run_mode() {
  local mode=$1 scheme=http tls_args=() tls_config=""
  dir=$work/$mode
  mkdir -p "$dir"
  if [ "$mode" = tls ]; then
    (
      cd "$dir" || exit 1
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out ca.key 2>/dev/null
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out server.key 2>/dev/null
      openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=ntprof-test-ca
      openssl req -new -key server.key -out server.csr -subj /CN=localhost
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
        -days 2 -extfile san.ext 2>/dev/null
    ) || { fail "$mode: openssl could not make the test certificates"; return; }
    scheme=https
    tls_args=(--tls-cert "$dir/server.pem" --tls-key "$dir/server.key")
    tls_config="    tls_config: {ca_file: $dir/ca.pem, server_name: localhost}"
  fi

  local sock="unix:$dir/collector.sock"
  export NTPROF_COLLECTOR=$sock
  "$collector" --listen "$sock" --data-dir "$dir/data" --metrics-listen 127.0.0.1:0 \
    "${tls_args[@]}" >"$dir/collector.log" 2>&1 &
  pids+=($!)
  local metrics_port=""
  for _ in $(seq 50); do
    metrics_port=$(sed -n 's/.*metrics on .* (port \([0-9]*\)).*/\1/p' "$dir/collector.log")
    [ -n "$metrics_port" ] && break
    sleep 0.2
  done
  [ -n "$metrics_port" ] || { fail "$mode: the collector never said its metrics port: $(cat "$dir/collector.log")"; return; }

  prom_port=$(free_port)
  cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: ntprof-collector
    scheme: $scheme
$tls_config
    static_configs: [{targets: ['127.0.0.1:$metrics_port']}]
EOF
  "$prometheus" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$dir/prometheus.log" 2>&1 &
  pids+=($!)
  wait_for 30 curl -sf "http://127.0.0.1:$prom_port/-/ready" -o /dev/null ||
    { fail "$mode: prometheus not ready: $(tail -5 "$dir/prometheus.log")"; return; }

  "$paced" "$sock" prom 8 "$dir/truth" >"$dir/agent.log" 2>&1 &
  pids+=($!)
  wait_for 15 grep -q connected "$dir/agent.log" || { fail "$mode: agents never connected: $(cat "$dir/agent.log")"; return; }
  "$ctl" start prom -s 10 >/dev/null || { fail "$mode: ntprofctl start"; return; }

  # While the agents stream: the median per stage from the rate of the buckets.
  p50='histogram_quantile(0.5, sum by (le, stage) (rate(ntprof_stage_latency_seconds_bucket{role="joined"}[20s])))'
  if ! wait_for 30 quantiles_ready; then
    fail "$mode: no per-stage quantiles from Prometheus after 30 s: $(cat "$dir/p50.txt"); up: $(query up)"
    return
  fi
  [ "$(query 'up{job="ntprof-collector"}' | awk '{print $2}')" = 1 ] &&
    echo "ok:   $mode: prometheus scrapes $scheme://127.0.0.1:$metrics_port/metrics (up = 1)" ||
    fail "$mode: up is not 1"
  # The bucket bounds the collector exposes, from Prometheus itself.
  curl -sf "http://127.0.0.1:$prom_port/api/v1/label/le/values" |
    jq -r '.data[] | select(. != "+Inf")' | sort -g >"$dir/bounds.txt"

  local stage truth value lower upper largest="" largest_value=0 truth_largest="" truth_max=0
  while read -r stage truth; do
    [ "$stage" = lost_records ] && continue
    value=$(awk -v s="$stage" '$1 == s {print $2}' "$dir/p50.txt")
    read -r lower upper < <(awk -v t="$truth" '$1 < t {lo = $1} $1 >= t && up == "" {up = $1}
                                             END {print (lo == "" ? 0 : lo), up}' "$dir/bounds.txt")
    if [ -n "$value" ] && awk -v v="$value" -v lo="$lower" -v up="$upper" 'BEGIN {exit !(v > lo && v <= up)}'; then
      printf 'ok:   %s: %-13s p50 %.3g s, known %.3g s, bucket (%s, %s]\n' "$mode" "$stage" "$value" "$truth" "$lower" "$upper"
    else
      fail "$mode: $stage p50 '$value' s is outside the bucket ($lower, $upper] of its known $truth s"
    fi
    if [[ " ${main_stages[*]} " == *" $stage "* ]]; then
      awk -v v="${value:-0}" -v m="$largest_value" 'BEGIN {exit !(v > m)}' && { largest=$stage; largest_value=$value; }
      awk -v v="$truth" -v m="$truth_max" 'BEGIN {exit !(v > m)}' && { truth_largest=$stage; truth_max=$truth; }
    fi
  done <"$dir/truth/truth.txt"
  [ "$largest" = "$truth_largest" ] && echo "ok:   $mode: largest stage by Prometheus: $largest (known: $truth_largest)" ||
    fail "$mode: Prometheus' largest stage is $largest, the known largest $truth_largest"

  wait_for 20 grep -q sent "$dir/agent.log" || fail "$mode: the agents never finished streaming"
  if wait_for 10 losses_arrived; then
    echo "ok:   $mode: ntprof_agent_lost_records_total{cause=\"ring_buffer_full\"} = the agent's declared losses"
  else
    fail "$mode: lost records in Prometheus: $(query ntprof_agent_lost_records_total | tr '\n' ' ')"
  fi
  local report_largest
  report_largest=$("$ctl" report prom -o json | jq -r '.groups[0].largest')
  [ "$report_largest" = "$largest" ] && echo "ok:   $mode: the session report's largest stage is $report_largest too" ||
    fail "$mode: the session report's largest stage is $report_largest, Prometheus' $largest"

  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  pids=()
}

run_mode plaintext
run_mode tls
[ "$failures" = 0 ] && echo "Prometheus reads the known stage latencies from the collector, plaintext and TLS"
exit "$failures"
