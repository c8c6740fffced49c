// One session as the collector lists it (`ntprofctl status`'s view), for verbs that must know its
// state before or after acting on it.
#pragma once

#include <optional>
#include <string>

#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {

// *found is the session named `name`, or nullopt when the collector has none of that name.
grpc::Status FindSession(v1::Collector::StubInterface& stub, const std::string& name,
                         std::optional<v1::SessionInfo>* found);

}  // namespace ntprof::cli
