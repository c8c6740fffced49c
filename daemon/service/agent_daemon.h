// AgentDaemon: `ntprofd serve` put together. Opens the spools, checks that the role's hooks attach,
// serves the Agent service on the unix socket (and TCP with TLS when asked), and keeps the links to
// the collectors (a CollectorRing: one or several; with --ring-file it re-reads the members every
// 2 s); Shutdown stops recordings cleanly (their SessionClosed is spooled) and leaves.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_service.h"
#include "collector_ring.h"
#include "kernel_facts.h"
#include "listen_security.h"
#include "recordings.h"

namespace ntprof::agent {

struct AgentDaemonOptions {
  AgentConfig agent;
  std::string socket_path = "/run/ntprofd/ntprofd.sock";
  std::string socket_group = "ntprof";
  std::vector<std::string> tcp_listen;  // HOST:PORT, TLS unless local or --insecure
  common::TlsFlags tls;              // of the TCP listeners
  // The collectors to stream to (none: local use only): one, or the members of a ring.
  std::vector<std::string> collectors;
  // A file naming the ring's members, re-read every ring_poll (it replaces `collectors`).
  std::string ring_file;
  std::chrono::milliseconds ring_poll{2000};
  CollectorRing::ChannelFn collector_channel;  // opens a channel to one collector
  SpoolOptions spool;
};

class AgentDaemon {
 public:
  static absl::StatusOr<std::unique_ptr<AgentDaemon>> Start(AgentDaemonOptions options);
  ~AgentDaemon();
  // stop_reason: why the recordings end, for the journal ("stopped by signal 15 (Terminated)").
  void Shutdown(const std::string& stop_reason = "stopped: ntprofd is shutting down");
  // Ports the TCP listeners got (for port 0).
  const std::vector<int>& tcp_ports() const { return tcp_ports_; }

 private:
  explicit AgentDaemon(AgentDaemonOptions options) : options_(std::move(options)) {}
  absl::Status Init();
  v1::AgentHello Hello(const Spool& spool) const;
  void WatchRingFile();

  AgentDaemonOptions options_;
  LiveKernelFacts facts_;
  std::vector<v1::HookDecision> hooks_;  // the plan after the trial attach
  std::unique_ptr<CollectorRing> ring_;
  std::unique_ptr<Recordings> recordings_;
  std::thread ring_watch_;
  std::mutex ring_watch_mu_;
  std::condition_variable ring_watch_cv_;
  bool ring_watch_stop_ = false;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::vector<int> tcp_ports_;
  bool shut_down_ = false;
};

}  // namespace ntprof::agent
