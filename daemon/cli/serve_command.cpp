#include "serve_command.h"

#include <string.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent_daemon.h"
#include "collector_target.h"
#include "exit_codes.h"
#include "hash_ring.h"
#include "host_identity.h"
#include "manual_page.h"
#include "spdlog/spdlog.h"
#include "stop_signals.h"
#include "systemd_notify.h"
#include "transport_option.h"
#include "whole_number.h"

namespace ntprof::daemon_cli {
namespace {

constexpr const char* kConfigFile = "/etc/ntprof/ntprofd.conf";

struct ServeArgs {
  std::string role;
  std::string transport = "tcp";
  std::string device;
  std::string btf;
  std::vector<std::string> spdk;  // SPDK binaries or PIDs recorded instead of the kernel
  std::string agent_name;
  std::string socket = "/run/ntprofd/ntprofd.sock";
  std::string socket_group = "ntprof";
  std::vector<std::string> listen;
  common::TlsFlags tls;
  cli::CollectorFlags collector;
  std::vector<std::string> collectors;  // --collector, repeatable, comma lists
  std::string ring_file;
  bool no_collector = false;
  std::string spool_dir = "/var/lib/ntprofd/spool";
  uint64_t spool_max_bytes = 256ull << 20;
  bool spool_no_fsync = false;
  double interval = 0.5;  // batches reach the collector this often: half of watch's 1 s line
  std::string log_level = "info";
};

int RunServe(ServeArgs a) {
  spdlog::set_level(spdlog::level::from_str(a.log_level));
  spdlog::set_pattern("%^%l%$: %v");  // journald adds the time and the unit
  agent::AgentDaemonOptions o;
  o.agent.name = a.agent_name.empty() ? agent::Hostname() : a.agent_name;
  o.agent.role = *agent::ParseRole(a.role);
  o.agent.transport = *agent::ParseTransport(a.transport);
  o.agent.device = a.device;
  o.agent.btf_path = a.btf;
  o.agent.spdk = a.spdk;
  o.agent.interval_s = a.interval;
  o.socket_path = a.socket;
  o.socket_group = a.socket_group;
  o.tcp_listen = a.listen;
  o.tls = a.tls;
  o.spool = agent::SpoolOptions{
      .dir = a.spool_dir, .max_bytes = a.spool_max_bytes, .fsync = !a.spool_no_fsync};
  if (!a.no_collector) {
    a.collector.address = absl::StrJoin(common::SplitMemberList(a.collectors), ",");
    const std::string source = cli::ResolveCollector(&a.collector, {kConfigFile});
    o.collectors = common::SplitMemberList({a.collector.address});
    o.ring_file = a.ring_file;
    o.collector_channel = [flags = a.collector](const std::string& address)
        -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
      std::shared_ptr<grpc::Channel> channel;
      std::string error;
      // Only the TLS files can fail here (exit status 2 at start-up).
      if (!cli::OpenChannel(address, flags, &channel, &error))
        return absl::InvalidArgumentError(absl::StrCat(error, " (collector TLS file)"));
      return channel;
    };
    if (!a.ring_file.empty()) {
      spdlog::info("collectors from the ring file {}", a.ring_file);
    } else if (!o.collectors.empty()) {
      spdlog::info("collector{} {} (from {})", o.collectors.size() > 1 ? "s" : "",
                   absl::StrJoin(o.collectors, ", "), source);
    }
  }

  const sigset_t signals = cli::BlockStopSignals();

  auto daemon = agent::AgentDaemon::Start(std::move(o));
  if (!daemon.ok()) {
    std::cerr << "ntprofd serve: " << daemon.status().message() << "\n";
    return daemon.status().code() == absl::StatusCode::kInvalidArgument ? cli::kBadInput
                                                                         : cli::kFailed;
  }
  agent::NotifySystemd("READY=1");
  const int sig = cli::WaitForStopSignal(signals);
  spdlog::info("signal {}: stopping recordings and leaving", sig);
  agent::NotifySystemd("STOPPING=1");
  (*daemon)->Shutdown(absl::StrCat("stopped by signal ", sig, " (", strsignal(sig), ")"));
  return cli::kOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Run as the long-lived agent of a collector");
  SetManualPage(cmd, WithTransportChoices(R"(NAME
    ntprofd serve - the long-lived agent: records what its collector asks, serves ntprofctl

SYNOPSIS
    ntprofd serve --role host|target [--transport {transports}] [--device DEV | --spdk BINARY|PID...]
                  [--collector HOST:PORT[,HOST:PORT...] | --ring-file FILE]
                  [--collector-tls-ca FILE] [--collector-tls-cert FILE --collector-tls-key FILE]
                  [--socket PATH] [--listen HOST:PORT --tls-cert FILE
                  --tls-key FILE [--tls-ca FILE --require-client-cert]]
                  [--spool-dir DIR] [--spool-max-bytes N] [--agent-name NAME]

DESCRIPTION
    Serves the Agent gRPC service (probe, start, stop, status, record) on a unix socket, mode
    0660 and group `ntprof` when that group exists, so its members may use ntprofctl without
    root. With a collector, keeps one stream to it: the collector starts and stops recordings
    (`ntprofctl start NAME`), the agent streams the records.

    Every message for the collector is first written to the spool (--spool-dir), numbered, and
    kept there until the collector acknowledges it, so a collector restart, a network outage or
    an agent restart loses nothing: after a reconnect the agent replays what is not acknowledged.
    When the spool reaches --spool-max-bytes, its oldest messages are dropped and declared to the
    collector as a gap ("spool full"); an agent killed while recording declares the interval it
    had not written. `ntprofctl status` and the session's report show such gaps.

    Several collectors (a ring) share a fleet: give every agent the same list (--collector
    repeated or a comma list, or --ring-file). Each record goes to the collector that owns its
    subsystem NQN on a consistent-hash ring, so the host's and the target's halves of a command
    meet at one collector; records without an NQN (--transport local), the device counters and
    the losses go to this agent's home collector (the owner of its name). Every collector gets
    the session's open and close. Each collector has its own link and its own spool, a
    subdirectory of --spool-dir named after its address; a collector that is down delays only
    its share. --ring-file is re-read every 2 s: a collector added there gets its share of
    subsystems from then on (about 1/N of them: the others stay where they are), one removed
    gets no more records and keeps its link until everything spooled for it is acknowledged.
    A start or stop may come from any collector of the ring; the session is recorded once.

    SPDK: with --spdk BINARY (repeatable; or a PID), the agent records the role's SPDK processes
    through the ntprof probe contract's USDT probes instead of the kernel (docs/spdk.md): every
    session a collector or ntprofctl starts attaches to the processes of BINARY running then and
    to those that start while it runs (a BINARY may be a library, e.g. libspdk_nvmf.so, to match
    every process that maps it), switches their sampling on with the session's rate and salt, and
    off when it ends. --transport names the transport they speak.

    The collector address: --collector, else $NTPROF_COLLECTOR, else a `collector = HOST:PORT`
    line in /etc/ntprof/ntprofd.conf (which also takes tls-ca, tls-cert and tls-key lines for
    the link), else none: the agent then serves only its socket. Unix sockets and localhost
    speak plaintext; any other collector address uses TLS.

    Under systemd (systemd/ntprofd.service, Type=notify) READY is sent once the socket serves
    and the role's hooks were attached once; SIGTERM stops the recordings cleanly (their last
    batch and trailer are spooled) and exits.)"));
  cmd->add_option("--role", args->role, "host (NVMe-oF initiator) or target (nvmet)")
      ->required()
      ->check(CLI::IsMember({"host", "target"}));
  AddTransportOption(cmd, &args->transport);
  cmd->add_option("--device", args->device,
                  "Default device: local: the block device (loop0), required; host: one namespace");
  cmd->add_option("--spdk", args->spdk,
                  "Record these SPDK processes (BINARY: every process of it, now or later; or a "
                  "PID) for --role through their ntprof USDT probes, instead of the kernel; "
                  "repeatable")
      ->type_name("BINARY|PID");
  cmd->add_option("--btf", args->btf, "External BTF for modules built without BTF")
      ->check(CLI::ExistingFile);
  cmd->add_option("--agent-name", args->agent_name,
                  "This agent's name at the collector (default: the hostname)");
  cmd->add_option("--socket", args->socket, "The unix socket to serve on")->capture_default_str();
  cmd->add_option("--socket-group", args->socket_group,
                  "Group that may use the socket (ignored when it does not exist)")
      ->capture_default_str();
  cmd->add_option("--listen", args->listen,
                  "Also serve on HOST:PORT (repeatable); TLS unless localhost or --insecure");
  cmd->add_option("--tls-cert", args->tls.cert_file, "PEM certificate of the --listen server");
  cmd->add_option("--tls-key", args->tls.key_file, "PEM private key of that certificate");
  cmd->add_option("--tls-ca", args->tls.ca_file, "PEM CA that signs client certificates");
  cmd->add_flag("--require-client-cert", args->tls.require_client_cert,
                "Refuse --listen clients without a certificate signed by --tls-ca");
  cmd->add_flag("--insecure", args->tls.insecure,
                "Allow plaintext --listen on non-local addresses");
  cmd->add_option("--collector", args->collectors,
                  "Collector HOST:PORT or unix:PATH (default: $NTPROF_COLLECTOR, the config file); "
                  "repeat it or give a comma list for several collectors sharing the fleet's "
                  "subsystems (a ring: the list must be the same on every agent)");
  cmd->add_option("--ring-file", args->ring_file,
                  "FILE naming the ring's collectors (one per line or comma-separated, # "
                  "comments), re-read every 2 s: replaces --collector; a collector added there "
                  "takes over its share of subsystems")
      ->check(CLI::ExistingFile);
  cmd->add_option("--collector-tls-ca", args->collector.tls_ca,
                  "PEM CA that signed the collector's certificate (default: system roots)");
  cmd->add_option("--collector-tls-cert", args->collector.tls_cert,
                  "PEM client certificate for a collector that requires one");
  cmd->add_option("--collector-tls-key", args->collector.tls_key, "PEM key of that certificate");
  cmd->add_flag("--collector-insecure", args->collector.insecure,
                "Plaintext to a non-local collector (trusted networks only)");
  cmd->add_option("--collector-keepalive", args->collector.keepalive_s,
                  "SECONDS between pings on the collector link; a collector that does not answer "
                  "within as long is dropped and dialled again (a half-open link ends)")
      ->check(cli::WholeNumber<int>(5, 3600))
      ->capture_default_str();
  cmd->add_flag("--no-collector", args->no_collector,
                "Ignore $NTPROF_COLLECTOR and the config file: serve the socket only");
  cmd->add_option("--spool-dir", args->spool_dir,
                  "Where unacknowledged messages wait (kept across restarts)")
      ->capture_default_str();
  cmd->add_option("--spool-max-bytes", args->spool_max_bytes,
                  "Spool size limit; beyond it the oldest messages are dropped and declared")
      ->check(cli::WholeNumber<uint64_t>(uint64_t{64} << 10, uint64_t{1} << 40))
      ->capture_default_str();
  cmd->add_flag("--spool-no-fsync", args->spool_no_fsync,
                "Do not fsync each spooled message (still safe against an agent crash, not "
                "against a machine crash)");
  cmd->add_option("-i,--interval", args->interval, "Batch interval in SECONDS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--log-level", args->log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  cmd->footer(R"(
EXIT STATUS
    0  stopped by SIGTERM/SIGINT after finalizing its recordings
    1  could not start: the socket is taken by a live agent, the spool directory or a listener
       cannot be used; the message says which and what to do
    2  bad flags or an unreadable TLS file

FILES
    /run/ntprofd/ntprofd.sock     the Agent service (ntprofctl probe, ...)
    /var/lib/ntprofd/spool/       epoch, *.seg segments, <session>.recording markers; with a
                                  ring, one subdirectory per collector (epoch, segments)
    /etc/ntprof/ntprofd.conf      collector = HOST:PORT[,HOST:PORT...], tls-ca =, tls-cert =,
                                  tls-key =

EXAMPLES
    host#   ntprofd serve --role host --collector collector1:7420 --collector-tls-ca ca.pem
    target# ntprofd serve --role target --collector collector1:7420 \
                --collector-tls-ca ca.pem --collector-tls-cert target1.pem \
                --collector-tls-key target1.key
    host#   ntprofd serve --role host --transport local --device loop0 \
                --collector localhost:7420 --spool-dir /tmp/spool --socket /tmp/ntprofd.sock
    host#   ntprofd serve --role host --collector c1:7420,c2:7420,c3:7420 --collector-tls-ca ca.pem
    host#   ntprofd serve --role host --ring-file /etc/ntprof/collectors --collector-tls-ca ca.pem
                                      # one collector per line; edit it to grow the ring
    target# ntprofd serve --role target --spdk /usr/local/bin/nvmf_tgt --collector c1:7420
                                      # SPDK's NVMe-oF target, processes started later too
    host#   systemctl enable --now ntprofd    # the same, from /etc/default/ntprofd)");
  cmd->callback([args, exit_code] {
    if (!args->spdk.empty() && !args->device.empty())
      throw CLI::ValidationError("--device", "records a kernel device; --spdk records SPDK processes");
    if (args->spdk.empty()) CheckTransportFlags(args->role, args->transport, args->device, true);
    *exit_code = RunServe(*args);
  });
}

}  // namespace ntprof::daemon_cli
