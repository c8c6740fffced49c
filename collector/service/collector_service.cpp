#include "collector_service.h"

#include <algorithm>

#include "agent_stream_reactor.h"
#include "comparison.h"
#include "export_reactor.h"
#include "refused_stream.h"
#include "report_html.h"
#include "report_json.h"
#include "report_text.h"
#include "session_reports.h"
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

absl::StatusOr<Report> ReportOf(SessionRegistry* registry, const std::string& name,
                                ReportExtras extras = {}) {
  auto stored = registry->Stored(name);
  if (!stored.ok()) return stored.status();
  return SessionReport(*stored, extras);
}

// The slowest commands a request may ask for: each is kept in memory while the report is built.
constexpr uint32_t kMaxSlowest = 100'000;

}  // namespace

grpc::ServerBidiReactor<v1::AgentMessage, v1::CollectorMessage>* CollectorService::Connect(
    grpc::CallbackServerContext* context) {
  return new AgentStreamReactor(context, registry_, metrics_);
}

grpc::ServerUnaryReactor* CollectorService::StartSession(grpc::CallbackServerContext* context,
                                                         const v1::StartSessionRequest* request,
                                                         v1::SessionInfo* reply) {
  return Reply(context, registry_->StartSession(*request), reply);
}

grpc::ServerUnaryReactor* CollectorService::StopSession(grpc::CallbackServerContext* context,
                                                        const v1::StopSessionRequest* request,
                                                        v1::SessionInfo* reply) {
  return Reply(context, registry_->StopSession(request->name()), reply);
}

grpc::ServerUnaryReactor* CollectorService::ListSessions(grpc::CallbackServerContext* context,
                                                         const v1::ListSessionsRequest*,
                                                         v1::ListSessionsReply* reply) {
  *reply = registry_->List();
  return Done(context, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::WatchUpdate>* CollectorService::Watch(
    grpc::CallbackServerContext*, const v1::WatchRequest* request) {
  // Without this a mistyped name would be watched forever, printing empty intervals.
  if (absl::Status st = registry_->Watchable(request->session()); !st.ok()) {
    return new RefusedStream<v1::WatchUpdate>(common::ToGrpc(st));
  }
  return new WatchReactor(&registry_->watch(), *request, registry_->Now());
}

grpc::ServerUnaryReactor* CollectorService::Report(grpc::CallbackServerContext* context,
                                                   const v1::ReportRequest* request,
                                                   v1::RenderedOutput* reply) {
  const ReportExtras extras{std::min(request->slowest(), kMaxSlowest),
                           request->format() == v1::OUTPUT_HTML};
  auto report = ReportOf(registry_, request->session(), extras);
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
  auto base = ReportOf(registry_, request->base_session());
  if (!base.ok()) return Done(context, base.status());
  auto next = ReportOf(registry_, request->new_session());
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
    grpc::CallbackServerContext*, const v1::ExportRequest* request) {
  auto stored = registry_->Stored(request->session());
  if (!stored.ok()) return new RefusedStream<v1::ExportMessage>(common::ToGrpc(stored.status()));
  return new ExportReactor(std::move(*stored));
}

}  // namespace ntprof::collector
