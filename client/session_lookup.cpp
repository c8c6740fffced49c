#include "session_lookup.h"

#include "collector_target.h"

namespace ntprof::cli {

grpc::Status FindSession(v1::Collector::StubInterface& stub, const std::string& name,
                         std::optional<v1::SessionInfo>* found) {
  found->reset();
  v1::ListSessionsReply reply;
  const grpc::Status status = stub.ListSessions(UnaryContext().get(), {}, &reply);
  if (!status.ok()) return status;
  for (const auto& s : reply.sessions()) {
    if (s.name() == name) *found = s;
  }
  return grpc::Status::OK;
}

}  // namespace ntprof::cli
