// The gRPC face of the collector (callback API): each handler translates and hands the work to the
// SessionRegistry; streaming calls get their own reactor (agent channel, watch, export). In a ring
// of collectors (CollectorPeers) sessions, lists, reports, compares and exports cover the peers
// too; watch covers this collector's share only.
#pragma once

#include "collector_metrics.h"
#include "collector_peers.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "session_registry.h"

namespace ntprof::collector {

class CollectorService final : public v1::Collector::CallbackService {
 public:
  // peers may be null (a collector alone).
  CollectorService(SessionRegistry* registry, CollectorMetrics* metrics,
                   CollectorPeers* peers = nullptr)
      : registry_(registry), metrics_(metrics), peers_(peers) {}

  grpc::ServerBidiReactor<v1::AgentMessage, v1::CollectorMessage>* Connect(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* StartSession(grpc::CallbackServerContext* context,
                                         const v1::StartSessionRequest* request,
                                         v1::SessionInfo* reply) override;
  grpc::ServerUnaryReactor* StopSession(grpc::CallbackServerContext* context,
                                        const v1::StopSessionRequest* request,
                                        v1::SessionInfo* reply) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* context,
                                         const v1::ListSessionsRequest* request,
                                         v1::ListSessionsReply* reply) override;
  grpc::ServerWriteReactor<v1::WatchUpdate>* Watch(grpc::CallbackServerContext* context,
                                                   const v1::WatchRequest* request) override;
  grpc::ServerUnaryReactor* Report(grpc::CallbackServerContext* context,
                                   const v1::ReportRequest* request,
                                   v1::RenderedOutput* reply) override;
  grpc::ServerUnaryReactor* Compare(grpc::CallbackServerContext* context,
                                    const v1::CompareRequest* request,
                                    v1::RenderedOutput* reply) override;
  grpc::ServerWriteReactor<v1::ExportMessage>* Export(grpc::CallbackServerContext* context,
                                                      const v1::ExportRequest* request) override;

 private:
  struct Gathered {
    StoredSession session;
    std::shared_ptr<const std::filesystem::path> scratch;  // the peers' files, while needed
  };
  // The session's stored files here and, unless the call was forwarded, on every peer.
  absl::StatusOr<Gathered> Gather(grpc::CallbackServerContext* context, const std::string& name);
  CollectorPeers* FleetPeers(grpc::CallbackServerContext* context) const;

  SessionRegistry* registry_;
  CollectorMetrics* metrics_;
  CollectorPeers* peers_;
};

}  // namespace ntprof::collector
