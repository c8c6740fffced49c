// ntprof-collector: joins the live record streams of every agent, runs sessions, serves watch,
// report, compare and export to ntprofctl, and metrics to Prometheus.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <CLI/CLI.hpp>
#include <iostream>

#include "collector_server.h"
#include "schema.h"
#include "spdlog/spdlog.h"
#include "list_option.h"
#include "stop_signals.h"
#include "whole_number.h"

namespace v1 = ntprof::v1;

int main(int argc, char** argv) {
  ntprof::collector::ServerOptions options;
  std::string log_level = "info";
  CLI::App app{"ntprof-collector - live join of ntprofd record streams, sessions for ntprofctl"};
  app.footer(R"HELP(
Agents (ntprofd --collector ADDR) dial in and stream records; ntprofctl starts and stops sessions,
watches, reports and exports. Every session's records are stored under --data-dir, so a restarted
collector keeps its sessions and agents replay only what was not yet acknowledged.

Plaintext is accepted only on unix sockets and localhost; any other address needs --tls-cert and
--tls-key (add --tls-ca and --require-client-cert to refuse agents whose certificate that CA did not
sign), or an explicit --insecure.

With --clickhouse URL every sampled command (joined, or a half left unmatched) also becomes one
row of a ClickHouse table (ClickHouse's HTTP interface; docs/fleet.md), for `ntprofctl report
--clickhouse` over sessions, time ranges and collectors. Rows leave in batches; while ClickHouse is
away they wait (up to --clickhouse-queue rows, then the oldest are dropped and counted in
/metrics) and are retried. Agents are acked once a batch is in its session's files, and a
collector that starts reloads into ClickHouse every session whose rows may not all be there;
ClickHouse keeps one row per command, so a reload adds nothing twice.

With --join-threads N the live join runs on N threads, each owning the commands of some
subsystems (a stable hash of the subsystem NQN, which both halves of a command carry); records are
still stored, and agents acked, on the thread that receives them. On a 2-core machine one thread
took 350,000 records/s from agents over gRPC and 2 threads 1.2x that (docs/scale.md); on more
cores, more threads help a collector whose agents send more.

With --standing-session NAME the collector runs session NAME whenever agents are connected: every
agent that connects records it (1 in --standing-sample-rate, default 1000, with the
--standing-subsystems and --standing-devices filters), across collector and agent restarts, with no
end. `ntprofctl watch` with no name, /metrics and ClickHouse follow it; investigations (ntprofctl
start) run beside it on the same agents, each with its own rate and filters. Every session samples
with the fleet's salt (--fleet-salt, else one chosen once and kept in --data-dir), so an agent
recording several samples once, at the finest rate, and each session keeps its own share
(docs/control-plane.md, "The standing session and investigations").

Several collectors share a fleet (a ring): every agent gets all of them (ntprofd serve
--collector A --collector B, or --ring-file) and sends each record to the collector that owns its
subsystem on a consistent-hash ring, so both halves of a command meet at one collector. Each
collector names the others with --peer (or --peers-file, re-read at every use): ntprofctl may
then ask any of them. Start and stop reach every collector, status lists the whole fleet, report,
compare and export cover every collector's records (fetched from the peers with Export), and
watch merges every peer's intervals into the asked collector's (each interval waits up to 1.5 s
for the peers; one that is down or late is named in the interval's notes; a group several
collectors hold is combined, its p99 the largest of theirs, an upper bound). Peers are dialled
with this collector's --tls-ca, --tls-cert and --tls-key (plaintext on localhost and unix
sockets).

Examples:
  ntprof-collector --data-dir /tmp/ntprof
  ntprof-collector --standing-session fleet --standing-sample-rate 1000   # always on
  ntprof-collector --listen 0.0.0.0:7420 --peer c2:7420 --peer c3:7420 \
      --tls-cert c1.pem --tls-key c1.key --tls-ca ca.pem   # one of three; c2, c3 name the others
  ntprof-collector --clickhouse http://localhost:8123            # rows into ntprof.commands
  ntprof-collector --clickhouse-table ntprof.commands --print-schema | clickhouse-client -n
  ntprof-collector --listen unix:///run/ntprof/collector.sock --listen 0.0.0.0:7420 \
      --tls-cert collector.pem --tls-key collector.key --tls-ca ca.pem --require-client-cert)HELP");
  app.set_version_flag("--version", std::string("ntprof-collector ") + NTPROF_VERSION);
  app.add_option("--listen", options.listen, "Addresses to serve gRPC on (repeatable)")
      ->default_str("localhost:7420");
  app.add_option("--data-dir", options.data_dir, "Where sessions and their records are stored")
      ->default_str(options.data_dir);
  app.add_option("--metrics-listen", options.metrics_listen,
                 "HOST:PORT of the Prometheus endpoint (GET /metrics); empty to disable")
      ->default_str(options.metrics_listen);
  app.add_option("--tls-cert", options.tls.cert_file, "PEM certificate of this collector");
  app.add_option("--tls-key", options.tls.key_file, "PEM private key of that certificate");
  app.add_option("--tls-ca", options.tls.ca_file, "PEM CA that signs client (agent) certificates");
  app.add_flag("--require-client-cert", options.tls.require_client_cert,
               "Refuse clients without a certificate signed by --tls-ca (mutual TLS)");
  app.add_flag("--insecure", options.tls.insecure, "Allow plaintext on non-local addresses");
  app.add_option("--peer", options.peers,
                 "HOST:PORT of another collector of the ring (repeatable, or a comma list)");
  app.add_option("--peers-file", options.peers_file,
                 "FILE naming more peers (one per line or comma-separated, # comments), re-read "
                 "at every use: a collector added to the ring is asked from then on");
  app.add_option("--join-window", options.join_window_s,
                 "Seconds a half waits live for its other half")
      ->default_str("10")
      ->check(CLI::PositiveNumber);
  app.add_option("--join-threads", options.join_threads,
                 "Threads the live join runs on, commands divided among them by subsystem NQN "
                 "(as the ring divides them among collectors); 1 joins on the thread that "
                 "receives, as records arrive")
      ->default_str("1")
      ->check(CLI::Range(size_t{1}, size_t{64}));
  app.add_option("--clickhouse", options.clickhouse_url,
                 "ClickHouse HTTP(S) URL to write every command to (http://HOST:8123)");
  app.add_option("--clickhouse-ca", options.clickhouse_ca, "PEM CA of an https ClickHouse");
  app.add_option("--clickhouse-table", options.clickhouse_table,
                 "DATABASE.TABLE of the rows (created if missing)")
      ->default_str(options.clickhouse_table);
  app.add_option("--clickhouse-queue", options.clickhouse_queue_rows,
                 "Rows held in memory while ClickHouse is away; beyond, the oldest are dropped")
      ->default_str("1000000")
      ->check(CLI::Range(size_t{1}, size_t{100'000'000}));
  app.add_option("--clickhouse-batch", options.clickhouse_batch_rows, "Rows per INSERT (at most)")
      ->default_str("10000")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  bool print_schema = false;
  app.add_flag("--print-schema", print_schema,
               "Print the CREATE statements of --clickhouse-table and exit");
  v1::RecordingSettings* standing = &options.standing;
  app.add_option_function<std::string>(
      "--standing-session", [standing](const std::string& name) { standing->set_session(name); },
      "A session that runs whenever agents are connected (watch, /metrics, ClickHouse)");
  standing->set_sample_rate(1000);
  app.add_option_function<uint32_t>(
         "--standing-sample-rate",
         [standing](uint32_t n) { standing->set_sample_rate(n); },
         "The standing session samples one command in N (default 1000)")
      ->check(ntprof::cli::WholeNumber<uint32_t>(1, 1u << 30));
  ntprof::cli::AddListOption(&app, "--standing-subsystems", standing->mutable_subsystems(),
                             "The standing session records only these subsystem NQNs");
  ntprof::cli::AddListOption(&app, "--standing-devices", standing->mutable_devices(),
                             "The standing session records only these block devices");
  app.add_option("--fleet-salt", options.fleet_salt,
                 "The sampling salt of every session (default: chosen once, kept in --data-dir; "
                 "give every collector of a ring the same)")
      ->check(ntprof::cli::WholeNumber<uint64_t>());
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->default_str("info");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.help() << "ntprof-collector: " << e.what() << "\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  if (print_schema) {
    auto table = ntprof::clickhouse::ParseTableName(options.clickhouse_table);
    if (!table.ok()) {
      std::cerr << "ntprof-collector: " << table.status().message() << "\n";
      return 2;
    }
    for (const std::string& sql : ntprof::clickhouse::CreateStatements(*table)) {
      std::cout << sql << ";\n";
    }
    return 0;
  }

  const sigset_t signals = ntprof::cli::BlockStopSignals();

  ntprof::collector::CollectorServer server(options);
  if (auto st = server.Start(); !st.ok()) {
    std::cerr << "ntprof-collector: " << st.message() << "\n";
    return st.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  for (size_t i = 0; i < options.listen.size(); ++i) {
    // The port a TCP listener got (":0" picks one); gRPC says 1 for a unix socket, which has none.
    const std::string& address = options.listen[i];
    if (address.starts_with("unix:")) {
      spdlog::info("serving on {}", address);
    } else {
      spdlog::info("serving on {} (port {})", address, server.ports()[i]);
    }
  }
  if (!options.metrics_listen.empty()) {
    spdlog::info("metrics on {} (port {})", options.metrics_listen, server.metrics_port());
  }
  const int sig = ntprof::cli::WaitForStopSignal(signals);
  spdlog::info("signal {}: shutting down", sig);
  // Every acked batch is already in its session file (acks follow write(2)), so a stream that
  // does not wind down must not keep the process alive: leave after a bounded grace period.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    spdlog::warn("streams still open 10 s after the signal; exiting without them");
    std::_Exit(0);
  }).detach();
  server.Shutdown();
  return 0;
}
