// The way down to one connected agent (control and acks). Implemented by the gRPC stream reactor;
// tests implement it with a vector. Send never blocks: the stream queues and writes in order.
#pragma once

#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  virtual void Send(const v1::CollectorMessage& message) = 0;
};

}  // namespace ntprof::collector
