#include "agent_stream_reactor.h"

#include "spdlog/spdlog.h"
#include "status_conversion.h"

namespace ntprof::collector {

AgentStreamReactor::AgentStreamReactor(grpc::CallbackServerContext* context,
                                       SessionRegistry* registry, CollectorMetrics* metrics)
    : context_(context), registry_(registry), metrics_(metrics) {
  StartRead(&in_);
}

void AgentStreamReactor::OnReadDone(bool ok) {
  if (!ok) {  // the agent closed its side, or the connection broke
    Fail(grpc::Status::OK);
    return;
  }
  if (!attached_) {
    if (!in_.has_hello()) {
      metrics_->Add(Counter::kBadAgentMessages);
      Fail(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message on Connect must be AgentHello"));
      return;
    }
    auto welcome = registry_->AttachAgent(this, in_.hello(), context_->peer());
    if (!welcome.ok()) {
      Fail(common::ToGrpc(welcome.status()));
      return;
    }
    attached_ = true;  // the registry sent the Welcome through Send()
  } else {
    auto ack = registry_->Ingest(this, in_);
    if (!ack.ok()) {
      Fail(common::ToGrpc(ack.status()));
      return;
    }
    v1::CollectorMessage reply;
    *reply.mutable_ack() = *ack;
    Send(reply);
  }
  StartRead(&in_);
}

void AgentStreamReactor::Send(const v1::CollectorMessage& message) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  // Acks are cumulative: a newer one makes a queued, unsent one useless.
  const bool replace =
      message.has_ack() && out_.size() > (writing_ ? 1u : 0u) && out_.back().has_ack();
  if (replace) {
    out_.back() = message;
  } else {
    out_.push_back(message);
  }
  if (!writing_) NextWriteLocked();
}

void AgentStreamReactor::NextWriteLocked() {
  if (out_.empty()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  StartWrite(&out_.front());
}

void AgentStreamReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  out_.pop_front();
  writing_ = false;
  if (finished_) {
    // Finish waits for the write in flight (no new write after Finish).
    if (final_status_) Finish(*std::exchange(final_status_, std::nullopt));
    return;
  }
  if (ok) NextWriteLocked();  // else the stream is broken; OnReadDone(false) finishes it
}

void AgentStreamReactor::Fail(const grpc::Status& status) {
  if (attached_) {
    registry_->DetachAgent(this);
    attached_ = false;
  }
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!status.ok())
    spdlog::warn("agent stream from {}: {}", context_->peer(), status.error_message());
  if (writing_) {
    final_status_ = status;
  } else {
    Finish(status);
  }
}

void AgentStreamReactor::OnDone() {
  if (attached_) registry_->DetachAgent(this);
  delete this;
}

}  // namespace ntprof::collector
