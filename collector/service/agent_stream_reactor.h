// The agent channel (Collector.Connect): one bidirectional reactor per connected agent. Reads one
// message at a time and hands it to the SessionRegistry before reading the next, so an agent that
// floods is slowed by gRPC flow control instead of growing our memory. Writes (welcome, acks,
// start/stop) go out in order through a queue; acks are cumulative, so a queued ack that was not
// yet sent is replaced by the newer one and the queue stays small.
#pragma once

#include <grpcpp/grpcpp.h>

#include <deque>
#include <mutex>
#include <optional>

#include "agent_channel.h"
#include "collector_peers.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "session_registry.h"

namespace ntprof::collector {

class AgentStreamReactor final
    : public grpc::ServerBidiReactor<v1::AgentMessage, v1::CollectorMessage>,
      public AgentChannel {
 public:
  // peers: the other collectors of a ring (null: none); see AdoptSession.
  AgentStreamReactor(grpc::CallbackServerContext* context, SessionRegistry* registry,
                     CollectorMetrics* metrics, CollectorPeers* peers = nullptr);

  void Send(const v1::CollectorMessage& message) override;

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override {}
  void OnDone() override;

 private:
  void Fail(const grpc::Status& status);
  // In a ring, an agent's SessionOpened may arrive before the session's start was forwarded here,
  // or at a collector that joined the ring mid-session: the session is registered from what the
  // peers know of it (agents, duration), else from the header, so no record of it is dropped.
  void AdoptSession(const v1::FileHeader& header);
  void NextWriteLocked();

  grpc::CallbackServerContext* context_;
  SessionRegistry* registry_;
  CollectorMetrics* metrics_;
  CollectorPeers* peers_;
  v1::AgentHello hello_;
  v1::AgentMessage in_;
  bool attached_ = false;

  std::mutex mu_;
  std::deque<v1::CollectorMessage> out_;  // front is being written while writing_
  bool writing_ = false;
  bool finished_ = false;
  std::optional<grpc::Status> final_status_;  // Finish deferred until the write in flight is done
};

}  // namespace ntprof::collector
