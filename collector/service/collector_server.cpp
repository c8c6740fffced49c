#include "collector_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {
namespace {

// A unix socket left by a collector that died would make bind fail.
void PrepareUnixSocket(const std::string& address) {
  std::string path = address.substr(std::string("unix:").size());
  while (absl::StartsWith(path, "//")) path = path.substr(1);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (std::filesystem::is_socket(path, ec)) std::filesystem::remove(path, ec);
}

}  // namespace

absl::Status CollectorServer::StartFleet() {
  const std::string& url = options_.clickhouse_url;
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--clickhouse ", url, ": expected http://HOST:8123 or https://HOST:8443"));
  }
  auto table = clickhouse::ParseTableName(options_.clickhouse_table);
  if (!table.ok()) return table.status();
  clickhouse::WriterOptions writer;
  writer.table = *table;
  writer.max_queued_rows = options_.clickhouse_queue_rows;
  writer.batch_rows = options_.clickhouse_batch_rows;
  fleet_ = std::make_unique<clickhouse::RowWriter>(
      clickhouse::ServerOptions{.url = url, .ca_file = options_.clickhouse_ca}, writer);
  if (auto st = fleet_->Start(); !st.ok()) {
    // Not fatal: the sessions' files hold every record, the writer keeps trying, and what does
    // not fit its queue meanwhile is reloaded from the files by a later start.
    spdlog::warn("{}; rows wait in memory (up to {}) and are retried", std::string(st.message()),
                 options_.clickhouse_queue_rows);
  } else {
    spdlog::info("command rows go to {} at {}", table->Qualified(), url);
  }
  return absl::OkStatus();
}

absl::Status CollectorServer::Start() {
  auto tls = common::LoadTls(options_.tls);
  if (!tls.ok()) return tls.status();

  RegistryOptions registry_options;
  registry_options.data_dir = options_.data_dir;
  registry_options.join.window_ns = static_cast<int64_t>(options_.join_window_s * 1e9);
  registry_options.join_threads = options_.join_threads;
  registry_options.fleet_salt = options_.fleet_salt;
  registry_options.standing = options_.standing;
  if (!options_.clickhouse_url.empty()) {
    if (auto st = StartFleet(); !st.ok()) return st;
    registry_options.fleet = fleet_.get();
  }
  auto registry = SessionRegistry::Open(registry_options, &metrics_counters_);
  if (!registry.ok()) return registry.status();
  registry_ = std::move(*registry);
  peers_ = std::make_unique<CollectorPeers>(PeerOptions{
      .peers = options_.peers,
      .peers_file = options_.peers_file,
      .tls = {.tls_ca = options_.tls.ca_file,
              .tls_cert = options_.tls.cert_file,
              .tls_key = options_.tls.key_file},
      .scratch_dir = std::filesystem::path(options_.data_dir) / "scratch"});
  service_ =
      std::make_unique<CollectorService>(registry_.get(), &metrics_counters_, peers_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  ports_.assign(options_.listen.size(), 0);
  for (size_t i = 0; i < options_.listen.size(); ++i) {
    const std::string& address = options_.listen[i];
    auto credentials = common::CredentialsFor(address, options_.tls, *tls);
    if (!credentials.ok()) return credentials.status();
    if (absl::StartsWith(address, "unix:")) PrepareUnixSocket(address);
    builder.AddListeningPort(address, *credentials, &ports_[i]);
  }
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
  // Half-open connections (a peer that vanished, garbage that never completes a handshake) are
  // closed instead of held forever.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Clients ping every --collector-keepalive seconds (5 at the least); more often is abuse.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 4'000);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10'000);
  server_ = builder.BuildAndStart();
  if (!server_) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", absl::StrJoin(options_.listen, ", "),
        ": address in use or not permitted (another collector running? use --listen)"));
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i] == 0 && !absl::StartsWith(options_.listen[i], "unix:")) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen[i]));
    }
  }

  if (!options_.metrics_listen.empty()) {
    auto st = metrics_.Start(options_.metrics_listen, options_.tls, *tls,
                             [this] { return metrics_counters_.RenderPrometheus(); });
    if (!st.ok()) return st;
  }
  ticker_ = std::thread([this] {
    std::unique_lock lock(tick_mu_);
    while (!stopping_) {
      tick_cv_.wait_for(lock, std::chrono::duration<double>(options_.tick_s));
      if (stopping_) break;
      lock.unlock();
      registry_->Tick();
      lock.lock();
    }
  });
  return absl::OkStatus();
}

void CollectorServer::Shutdown() {
  {
    std::lock_guard lock(tick_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  tick_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  // Streams that never end (watch, agents) are cancelled after the deadline.
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  metrics_.Stop();
  // Rows still queued get a few seconds; whatever stays behind is reloaded by the next start.
  if (fleet_ && !fleet_->Drain(std::chrono::seconds(5))) {
    spdlog::warn("ClickHouse did not take every row before shutdown; the next start reloads them");
  }
}

}  // namespace ntprof::collector
