// AgentService: the Agent gRPC service (agent.proto) ntprofd serves on its unix socket and
// optionally on TCP. The handlers only translate; the state is in Recordings and the CollectorRing
// (the collectors' spools and links).
#pragma once

#include <functional>

#include "collector_ring.h"
#include "kernel_facts.h"
#include "ntprof/v1/agent.grpc.pb.h"
#include "recordings.h"

namespace ntprof::agent {

class AgentService final : public v1::Agent::Service {
 public:
  AgentService(const AgentConfig* config, const KernelFacts* facts, Recordings* recordings,
               const CollectorRing* ring);

  grpc::Status Probe(grpc::ServerContext*, const v1::ProbeRequest* request,
                     v1::ProbeReply* reply) override;
  grpc::Status Start(grpc::ServerContext*, const v1::AgentStartRequest* request,
                     v1::AgentStartReply* reply) override;
  grpc::Status Stop(grpc::ServerContext*, const v1::AgentStopRequest* request,
                    v1::AgentStopReply* reply) override;
  grpc::Status Status(grpc::ServerContext*, const v1::AgentStatusRequest*,
                      v1::AgentStatus* reply) override;
  grpc::Status Record(grpc::ServerContext* context, const v1::RecordRequest* request,
                      grpc::ServerWriter<v1::RecordStreamMessage>* writer) override;

 private:
  const AgentConfig* config_;
  const KernelFacts* facts_;
  Recordings* recordings_;
  const CollectorRing* ring_;
};

}  // namespace ntprof::agent
