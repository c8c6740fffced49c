#include "collector_service.h"

#include <algorithm>
#include <optional>

#include "agent_stream_reactor.h"
#include "comparison.h"
#include "export_reactor.h"
#include "fleet_watch_reactor.h"
#include "refused_stream.h"
#include "report_html.h"
#include "report_json.h"
#include "report_text.h"
#include "session_reports.h"
#include "spdlog/spdlog.h"
#include "status_conversion.h"
#include "watch_reactor.h"

namespace ntprof::collector {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(common::ToGrpc(status));
  return reactor;
}

// A finished unary call whose reply is the StatusOr's value.
template <typename T>
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context, absl::StatusOr<T> result,
                                T* reply) {
  if (result.ok()) *reply = std::move(*result);
  return Done(context, result.status());
}


// The slowest commands a request may ask for: each is kept in memory while the report is built.
constexpr uint32_t kMaxSlowest = 100'000;

// The merged view of one session across the ring (for the replies of start and stop).
std::optional<v1::SessionInfo> FleetInfo(SessionRegistry* registry, CollectorPeers* peers,
                                         const std::string& name) {
  std::vector<std::string> errors;
  const v1::ListSessionsReply merged = MergeLists(registry->List(), peers->List(&errors));
  for (const auto& s : merged.sessions()) {
    if (s.name() == name) return s;
  }
  return std::nullopt;
}

}  // namespace

CollectorPeers* CollectorService::FleetPeers(grpc::CallbackServerContext* context) const {
  if (!peers_ || CollectorPeers::Forwarded(context) || peers_->empty()) return nullptr;
  return peers_;
}

absl::StatusOr<CollectorService::Gathered> CollectorService::Gather(
    grpc::CallbackServerContext* context, const std::string& name) {
  auto local = registry_->Stored(name);
  CollectorPeers* peers = FleetPeers(context);
  if (!peers) {
    if (!local.ok()) return local.status();
    return Gathered{std::move(*local), nullptr};
  }
  if (!local.ok() && local.status().code() != absl::StatusCode::kNotFound) return local.status();
  auto fetched = peers->Fetch(name);
  if (!fetched.ok() && fetched.status().code() != absl::StatusCode::kNotFound)
    return fetched.status();
  if (!local.ok() && !fetched.ok()) return local.status();
  Gathered out{local.ok() ? std::move(*local) : StoredSession{name, false, {}, {}}, nullptr};
  if (fetched.ok()) {
    out.scratch = fetched->scratch;
    out.session.running |= fetched->session.running;
    for (auto& f : fetched->session.files) out.session.files.push_back(std::move(f));
    for (auto& note : fetched->session.notes) {
      if (std::find(out.session.notes.begin(), out.session.notes.end(), note) ==
          out.session.notes.end())
        out.session.notes.push_back(std::move(note));
    }
  }
  return out;
}

grpc::ServerBidiReactor<v1::AgentMessage, v1::CollectorMessage>* CollectorService::Connect(
    grpc::CallbackServerContext* context) {
  return new AgentStreamReactor(context, registry_, metrics_,
                                peers_ && !peers_->empty() ? peers_ : nullptr);
}

grpc::ServerUnaryReactor* CollectorService::StartSession(grpc::CallbackServerContext* context,
                                                         const v1::StartSessionRequest* request,
                                                         v1::SessionInfo* reply) {
  auto started = registry_->StartSession(*request);
  CollectorPeers* peers = FleetPeers(context);
  if (!peers || !started.ok()) return Reply(context, std::move(started), reply);
  // Here first (the salt is chosen), then every peer with the same salt: an agent records one
  // recording whichever collector's start reaches it first.
  v1::StartSessionRequest forwarded = *request;
  forwarded.mutable_settings()->set_salt(started->settings().salt());
  const std::vector<std::string> errors = peers->StartSession(forwarded);
  *reply = FleetInfo(registry_, peers, request->name()).value_or(*started);
  for (const std::string& e : errors) reply->add_notes(e);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CollectorService::StopSession(grpc::CallbackServerContext* context,
                                                        const v1::StopSessionRequest* request,
                                                        v1::SessionInfo* reply) {
  auto stopped = registry_->StopSession(request->name());
  CollectorPeers* peers = FleetPeers(context);
  if (!peers) return Reply(context, std::move(stopped), reply);
  if (!stopped.ok() && stopped.status().code() != absl::StatusCode::kNotFound)
    return Done(context, stopped.status());
  const std::vector<std::string> errors = peers->StopSession(request->name());
  auto info = FleetInfo(registry_, peers, request->name());
  if (!info) return Done(context, stopped.status());  // nobody has it
  *reply = *info;
  for (const std::string& e : errors) reply->add_notes(e);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CollectorService::ListSessions(grpc::CallbackServerContext* context,
                                                         const v1::ListSessionsRequest*,
                                                         v1::ListSessionsReply* reply) {
  *reply = registry_->List();
  if (CollectorPeers* peers = FleetPeers(context)) {
    std::vector<std::string> errors;
    *reply = MergeLists(std::move(*reply), peers->List(&errors));
    for (const std::string& e : errors) spdlog::warn("ListSessions: {}", e);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::WatchUpdate>* CollectorService::Watch(
    grpc::CallbackServerContext* context, const v1::WatchRequest* asked) {
  // No name: the standing session when the collector has one (else every running session).
  v1::WatchRequest named = *asked;
  if (named.session().empty()) named.set_session(registry_->standing_session());
  const v1::WatchRequest* request = &named;
  // Without this a mistyped name would be watched forever, printing empty intervals.
  if (absl::Status st = registry_->Watchable(request->session()); !st.ok()) {
    return new RefusedStream<v1::WatchUpdate>(common::ToGrpc(st));
  }
  // In a ring, every interval carries the peers' groups too.
  if (CollectorPeers* peers = FleetPeers(context)) {
    return new FleetWatchReactor(context, &registry_->watch(), peers, *request, registry_->Now());
  }
  return new WatchReactor(context, &registry_->watch(), *request, registry_->Now());
}

grpc::ServerUnaryReactor* CollectorService::Report(grpc::CallbackServerContext* context,
                                                   const v1::ReportRequest* request,
                                                   v1::RenderedOutput* reply) {
  const ReportExtras extras{std::min(request->slowest(), kMaxSlowest),
                           request->format() == v1::OUTPUT_HTML};
  auto gathered = Gather(context, request->session());
  if (!gathered.ok()) return Done(context, gathered.status());
  auto report = SessionReport(gathered->session, extras);
  if (!report.ok()) return Done(context, report.status());
  switch (request->format()) {
    case v1::OUTPUT_JSON: reply->set_text(ToJson(*report).dump(2) + "\n"); break;
    case v1::OUTPUT_HTML: reply->set_text(RenderHtml(*report, HtmlOptions{request->detail()})); break;
    default: reply->set_text(RenderText(*report, TextOptions{request->detail()}));
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CollectorService::Compare(grpc::CallbackServerContext* context,
                                                    const v1::CompareRequest* request,
                                                    v1::RenderedOutput* reply) {
  // The HTML page draws both runs' distributions.
  const ReportExtras extras{.charts = request->format() == v1::OUTPUT_HTML};
  auto base_files = Gather(context, request->base_session());
  if (!base_files.ok()) return Done(context, base_files.status());
  auto base = SessionReport(base_files->session, extras);
  if (!base.ok()) return Done(context, base.status());
  auto next_files = Gather(context, request->new_session());
  if (!next_files.ok()) return Done(context, next_files.status());
  auto next = SessionReport(next_files->session, extras);
  if (!next.ok()) return Done(context, next.status());
  const Comparison comparison = ntprof::Compare(*base, *next);
  switch (request->format()) {
    case v1::OUTPUT_JSON: reply->set_text(ToJson(comparison).dump(2) + "\n"); break;
    case v1::OUTPUT_HTML: reply->set_text(RenderHtml(comparison)); break;
    default: reply->set_text(RenderText(comparison));
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::ExportMessage>* CollectorService::Export(
    grpc::CallbackServerContext* context, const v1::ExportRequest* request) {
  auto gathered = Gather(context, request->session());
  if (!gathered.ok())
    return new RefusedStream<v1::ExportMessage>(common::ToGrpc(gathered.status()));
  return new ExportReactor(std::move(gathered->session), gathered->scratch);
}

}  // namespace ntprof::collector
