// The whole ntprof-collector process minus flag parsing: registry, gRPC server (Collector service,
// health, reflection), the once-a-second tick, and the metrics endpoint. The tests start it in
// process or as the real binary.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "collector_metrics.h"
#include "collector_service.h"
#include "listen_security.h"
#include "metrics_http_server.h"
#include "row_writer.h"
#include "session_registry.h"

namespace ntprof::collector {

struct ServerOptions {
  std::vector<std::string> listen = {"localhost:7420"};
  std::string metrics_listen = "localhost:9464";  // "" = no metrics endpoint
  std::string data_dir = "/var/lib/ntprof/collector";
  common::TlsFlags tls;
  double join_window_s = 10;
  size_t join_threads = 1;  // RegistryOptions::join_threads
  size_t max_message_bytes = 16u << 20;
  double tick_s = 0.25;  // how often watch intervals are closed: a line comes <= 0.25 s late
  // The fleet store (docs/fleet.md): "" = none.
  std::string clickhouse_url;
  std::string clickhouse_ca;
  std::string clickhouse_table = "ntprof.commands";
  size_t clickhouse_queue_rows = 1'000'000;
  size_t clickhouse_batch_rows = 10'000;
  // The other collectors of a ring (docs/control-plane.md, "Several collectors").
  std::vector<std::string> peers;
  std::string peers_file;
  uint64_t fleet_salt = 0;        // RegistryOptions::fleet_salt
  v1::RecordingSettings standing;  // RegistryOptions::standing
};

class CollectorServer {
 public:
  explicit CollectorServer(ServerOptions options) : options_(std::move(options)) {}
  ~CollectorServer() { Shutdown(); }

  absl::Status Start();
  void Shutdown();

  // The ports actually bound, in --listen order (useful with port 0).
  const std::vector<int>& ports() const { return ports_; }
  int metrics_port() const { return metrics_.port(); }
  SessionRegistry* registry() { return registry_.get(); }
  CollectorMetrics* metrics() { return &metrics_counters_; }

 private:
  absl::Status StartFleet();

  ServerOptions options_;
  CollectorMetrics metrics_counters_;
  std::unique_ptr<clickhouse::RowWriter> fleet_;  // outlives the registry that feeds it
  std::unique_ptr<SessionRegistry> registry_;
  std::unique_ptr<CollectorPeers> peers_;
  std::unique_ptr<CollectorService> service_;
  std::unique_ptr<grpc::Server> server_;
  MetricsHttpServer metrics_;
  std::vector<int> ports_;
  std::thread ticker_;
  std::mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool stopping_ = false;
};

}  // namespace ntprof::collector
