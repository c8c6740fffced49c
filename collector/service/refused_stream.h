// A server-streaming call refused before its first message (an unknown session): the reactor only
// finishes, so the refusal reaches the client as the stream's status.
#pragma once

#include <grpcpp/grpcpp.h>

#include <utility>

namespace ntprof::collector {

template <typename Message>
class RefusedStream final : public grpc::ServerWriteReactor<Message> {
 public:
  explicit RefusedStream(grpc::Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace ntprof::collector
