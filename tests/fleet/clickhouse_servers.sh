# Sourced by the fleet tests: a scratch directory, the background processes (cleaned up on exit),
# a failure counter, and Debian's clickhouse-server started on free localhost ports.
#   start_clickhouse_shards N   N servers (1 or 2), each with a minimal config of its own in
#                               $work/chK, and a remote_servers cluster "fleet" of all of them;
#                               sets CH_HTTP[K], CH_TCP[K], CH_PID[K], CH_URL[K] (K from 1)
#   stop_clickhouse K / restart_clickhouse K   (same ports, same data)
#   chq K SQL                   runs SQL on server K, prints the answer (TabSeparated)
#   create_fleet_tables COLLECTOR   on every server: ntprof.commands_local (the collector's
#                               --print-schema) and ntprof.commands, a Distributed table over all
#   start_sharded_store COLLECTOR   both of the above for two shards
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }

if ! command -v clickhouse-server >/dev/null || ! command -v clickhouse-client >/dev/null; then
  echo "clickhouse-server/clickhouse-client not installed (deploy/install-deps.sh): skipped"
  exit 77
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -a CH_HTTP CH_TCP CH_PID CH_URL
CH_COUNT=0

write_clickhouse_config() {  # K
  local k=$1 dir=$work/ch$1 shards=""
  for s in $(seq "$CH_COUNT"); do
    shards+="<shard><replica><host>127.0.0.1</host><port>${CH_TCP[$s]}</port></replica></shard>"
  done
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files"
  cat >"$dir/users.xml" <<USERS
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
USERS
  cat >"$dir/config.xml" <<CONFIG
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${CH_HTTP[$k]}</http_port>
  <tcp_port>${CH_TCP[$k]}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <remote_servers><fleet>$shards</fleet></remote_servers>
</yandex>
CONFIG
}

launch_clickhouse() {  # K
  local k=$1
  clickhouse-server --config-file="$work/ch$k/config.xml" >>"$work/ch$k/server.log" 2>&1 &
  CH_PID[$k]=$!
  pids+=("${CH_PID[$k]}")
  for _ in $(seq 100); do
    [ "$(curl -s "${CH_URL[$k]}/?query=SELECT%201")" = 1 ] && return 0
    sleep 0.2
  done
  echo "clickhouse-server $k did not answer on ${CH_URL[$k]}:"; tail -5 "$work/ch$k/server.log"
  return 1
}

start_clickhouse_shards() {  # N
  CH_COUNT=$1
  for k in $(seq "$CH_COUNT"); do
    CH_HTTP[$k]=$(free_port); CH_TCP[$k]=$(free_port)
    CH_URL[$k]="http://127.0.0.1:${CH_HTTP[$k]}"
  done
  for k in $(seq "$CH_COUNT"); do write_clickhouse_config "$k"; launch_clickhouse "$k" || return 1; done
}

stop_clickhouse() {  # K
  kill "${CH_PID[$1]}" 2>/dev/null; wait "${CH_PID[$1]}" 2>/dev/null
}
restart_clickhouse() { launch_clickhouse "$1"; }

chq() {  # K SQL
  curl -s --data-binary "$2" "${CH_URL[$1]}/"
}

create_fleet_tables() {  # COLLECTOR
  for k in $(seq "$CH_COUNT"); do
    "$1" --clickhouse-table ntprof.commands_local --print-schema |
      clickhouse-client --host 127.0.0.1 --port "${CH_TCP[$k]}" --multiquery || return 1
    chq "$k" "CREATE TABLE IF NOT EXISTS ntprof.commands AS ntprof.commands_local
              ENGINE = Distributed(fleet, ntprof, commands_local, command_key)" || return 1
  done
}

# start_sharded_store COLLECTOR: two servers as two shards and the tables on both.
start_sharded_store() {
  start_clickhouse_shards 2 || return 1
  create_fleet_tables "$1" || { fail "cannot create the tables"; return 1; }
  ok "clickhouse-server $(chq 1 'SELECT version()') x2, Distributed table ntprof.commands over both"
}

# start_collector NAME ARGS...: an ntprof-collector on a unix socket in $work (its data dir
# $work/NAME, log $work/NAME.log); sets COLLECTOR_PID and COLLECTOR_SOCK.
start_collector() {
  local name=$1; shift
  COLLECTOR_SOCK="unix:$work/$name.sock"
  "$collector" --listen "$COLLECTOR_SOCK" --data-dir "$work/$name" "$@" >>"$work/$name.log" 2>&1 &
  COLLECTOR_PID=$!
  pids+=("$COLLECTOR_PID")
  for _ in $(seq 50); do
    "$ctl" status --collector "$COLLECTOR_SOCK" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "collector $name did not come up:"; tail -5 "$work/$name.log"
  return 1
}

# start_agents COLLECTOR_SOCK SESSION PAIR COMMANDS SECONDS: a fleet_agent pair (hostPAIR,
# targetPAIR), its run in $work/runPAIR; returns once connected.
start_agents() {
  "$agent" "$1" "$2" "$work/run$3" "$3" "$4" "$5" >"$work/agent$3.log" 2>&1 &
  pids+=($!)
  wait_for 20 "agents of pair $3 to connect" grep -q connected "$work/agent$3.log"
}

wait_for() {  # seconds, description, command...
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "timed out waiting for $what"
  return 1
}

# rows_equal K SQL N: the answer of SQL on server K is N.
answer_is() { [ "$(chq "$1" "$2")" = "$3" ]; }
