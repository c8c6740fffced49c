// AgentDaemon: `ntprofd serve` put together. Opens the spool, checks that the role's hooks attach,
// serves the Agent service on the unix socket (and TCP with TLS when asked), and keeps the
// collector link; Shutdown stops recordings cleanly (their SessionClosed is spooled) and leaves.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_service.h"
#include "collector_link.h"
#include "kernel_facts.h"
#include "listen_security.h"
#include "recordings.h"
#include "spool.h"

namespace ntprof::agent {

struct AgentDaemonOptions {
  AgentConfig agent;
  std::string socket_path = "/run/ntprofd/ntprofd.sock";
  std::string socket_group = "ntprof";
  std::vector<std::string> tcp_listen;  // HOST:PORT, TLS unless local or --insecure
  common::TlsFlags tls;              // of the TCP listeners
  // The collector to dial ("" = none: local use only) and the channel to it.
  std::string collector_address;
  std::shared_ptr<grpc::Channel> collector_channel;
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
  v1::AgentHello Hello() const;

  AgentDaemonOptions options_;
  LiveKernelFacts facts_;
  std::vector<v1::HookDecision> hooks_;  // the plan after the trial attach
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Recordings> recordings_;
  std::unique_ptr<CollectorLink> link_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::vector<int> tcp_ports_;
  bool shut_down_ = false;
};

}  // namespace ntprof::agent
