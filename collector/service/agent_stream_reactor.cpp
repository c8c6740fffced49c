#include "agent_stream_reactor.h"

#include <algorithm>
#include <set>

#include "spdlog/spdlog.h"
#include "status_conversion.h"

namespace ntprof::collector {

AgentStreamReactor::AgentStreamReactor(grpc::CallbackServerContext* context,
                                       SessionRegistry* registry, CollectorMetrics* metrics,
                                       CollectorPeers* peers)
    : context_(context), registry_(registry), metrics_(metrics), peers_(peers) {
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
    hello_ = in_.hello();
  } else {
    if (peers_ && in_.has_opened()) AdoptSession(in_.opened().header());
    auto ack = registry_->Ingest(this, std::move(in_));  // in_ is read into again below
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

void AgentStreamReactor::AdoptSession(const v1::FileHeader& header) {
  const std::string& name = header.session();
  const v1::ListSessionsReply here = registry_->List();  // once per recording and agent: cheap
  std::set<std::string> connected;
  for (const auto& a : here.agents()) connected.insert(a.hostname());
  for (const auto& s : here.sessions()) {
    if (s.name() == name) return;
  }
  v1::StartSessionRequest request;
  request.set_name(name);
  request.mutable_settings()->set_sample_rate(header.sample_rate());
  request.mutable_settings()->set_salt(header.salt());
  std::set<std::string> hosts, targets;
  (hello_.role() == v1::ROLE_HOST ? hosts : targets).insert(hello_.hostname());
  std::vector<std::string> errors;
  for (const auto& [peer, reply] : peers_->List(&errors)) {
    for (const auto& info : reply.sessions()) {
      if (info.name() != name) continue;
      // The session as its first collector stored it: filters and duration too.
      *request.mutable_settings() = info.settings();
      if (info.settings().duration_s() != 0) {
        const int64_t end_ns = static_cast<int64_t>(info.start_wall_ns()) +
                               int64_t{info.settings().duration_s()} * 1'000'000'000;
        request.mutable_settings()->set_duration_s(static_cast<uint32_t>(
            std::max<int64_t>(1, (end_ns - registry_->Now() + 999'999'999) / 1'000'000'000)));
      }
      // The agents it chose that are connected here too (a start must name connected ones).
      for (const auto& a : info.agents()) {
        if (!a.refusal().empty() || connected.count(a.hostname()) == 0) continue;
        (a.role() == v1::ROLE_HOST ? hosts : targets).insert(a.hostname());
      }
    }
  }
  for (const auto& h : hosts) request.add_hosts(h);
  for (const auto& t : targets) request.add_targets(t);
  auto started = registry_->StartSession(request);
  if (started.ok()) {
    spdlog::info("session {}: taken over from the ring ({}'s recording opened here first)", name,
                 hello_.hostname());
  } else if (started.status().code() != absl::StatusCode::kAlreadyExists) {
    spdlog::warn("session {}: cannot take it over from the ring: {}", name,
                 std::string(started.status().message()));
  }
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
