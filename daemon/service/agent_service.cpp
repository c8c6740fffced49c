#include "agent_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hook_decisions.h"
#include "host_identity.h"
#include "status_conversion.h"
#include "transports.h"

namespace ntprof::agent {
namespace {

using common::ToGrpc;

}  // namespace

AgentService::AgentService(const AgentConfig* config, const KernelFacts* facts,
                           Recordings* recordings, const CollectorRing* ring)
    : config_(config), facts_(facts), recordings_(recordings), ring_(ring) {}

grpc::Status AgentService::Probe(grpc::ServerContext*, const v1::ProbeRequest* request,
                                 v1::ProbeReply* reply) {
  reply->set_hostname(config_->name);
  reply->set_kernel_release(KernelRelease());
  reply->set_agent_version(NTPROF_VERSION);
  const Role role = request->role() == v1::ROLE_TARGET ? Role::kTarget
                    : request->role() == v1::ROLE_HOST ? Role::kHost
                                                       : config_->role;
  const v1::Transport transport =
      FindTransport(request->transport()) ? request->transport() : config_->transport;
  const PlanInputs inputs{.external_btf = !config_->btf_path.empty()};
  ToHookDecisions(PlanHooks(role, transport, *facts_, inputs), reply->mutable_hooks());
  for (Role r : RolesPossible(*facts_, inputs))
    reply->add_roles_possible(ToProto(r));
  return grpc::Status::OK;
}

grpc::Status AgentService::Start(grpc::ServerContext*, const v1::AgentStartRequest* request,
                                 v1::AgentStartReply* reply) {
  auto header = recordings_->StartLocal(request->settings());
  if (!header.ok()) return ToGrpc(header.status());
  *reply->mutable_header() = *header;
  return grpc::Status::OK;
}

grpc::Status AgentService::Stop(grpc::ServerContext*, const v1::AgentStopRequest* request,
                                v1::AgentStopReply* reply) {
  auto trailer = recordings_->Stop(request->session(), "stopped by a local Agent.Stop");
  if (!trailer.ok()) return ToGrpc(trailer.status());
  *reply->mutable_trailer() = *trailer;
  return grpc::Status::OK;
}

grpc::Status AgentService::Status(grpc::ServerContext*, const v1::AgentStatusRequest*,
                                  v1::AgentStatus* reply) {
  reply->set_hostname(config_->name);
  reply->set_role(ToProto(config_->role));
  reply->set_agent_version(NTPROF_VERSION);
  for (const std::string& s : recordings_->Running()) reply->add_recording_sessions(s);
  *reply->mutable_losses() = recordings_->Losses();
  // Several collectors: their addresses, comma-separated; connected = every one of them.
  if (const auto members = ring_->Members(); !members.empty()) {
    reply->set_collector(absl::StrJoin(members, ","));
    reply->set_collector_connected(ring_->AllConnected());
  }
  const SpoolStats s = ring_->Stats();
  reply->set_spool_batches(s.unacked_messages);
  reply->set_spool_bytes(s.unacked_bytes);
  reply->set_last_acked_seq(s.acked_seq);
  return grpc::Status::OK;
}

grpc::Status AgentService::Record(grpc::ServerContext* context, const v1::RecordRequest* request,
                                  grpc::ServerWriter<v1::RecordStreamMessage>* writer) {
  auto feed = recordings_->Subscribe(request->session());
  if (!feed.ok()) return ToGrpc(feed.status());
  bool ended = false;
  while (!ended && !context->IsCancelled()) {
    auto m = (*feed)->Next(std::chrono::milliseconds(200), &ended);
    if (m && !writer->Write(*m)) return grpc::Status(grpc::StatusCode::CANCELLED, "caller left");
  }
  if (uint64_t dropped = (*feed)->dropped(); dropped > 0) {
    return grpc::Status(grpc::StatusCode::DATA_LOSS,
                        absl::StrCat("the caller read too slowly: ", dropped,
                                     " batch(es) were dropped from its stream"));
  }
  return grpc::Status::OK;
}

}  // namespace ntprof::agent
