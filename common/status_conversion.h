// absl::Status (the collector's and the agent's logic) -> grpc::Status (the wire): same code, same
// message.
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace ntprof::common {

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace ntprof::common
