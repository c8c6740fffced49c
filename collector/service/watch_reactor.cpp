#include "watch_reactor.h"

#include "absl/strings/str_cat.h"
#include "watch_end.h"

namespace ntprof::collector {

void WatchWriter::WriteNext() {
  std::lock_guard lock(mu_);
  if (writing_ || finished_ || cancelled_) return;
  const bool ended = Ended();  // first: an update queued before the end is still taken below
  auto update = NextUpdate();
  if (!update) {
    if (ended) FinishAsEnded();
    return;
  }
  current_ = std::move(*update);
  writing_ = true;
  StartWrite(&current_);
}

void WatchWriter::OnWriteDone(bool ok) {
  {
    std::lock_guard lock(mu_);
    writing_ = false;
    // The client went away: the write failed, or it succeeded just before OnCancel, which then
    // left the Finish to us (a write was in flight).
    if (!ok || cancelled_) {
      if (!finished_) {
        finished_ = true;
        Finish(grpc::Status::OK);
      }
      return;
    }
  }
  WriteNext();
}

void WatchWriter::FinishAsEnded() {
  finished_ = true;
  context_->AddTrailingMetadata(
      common::kWatchEndKey, absl::StrCat("session '", session_, "' ended; `ntprofctl report ",
                                         session_, "` shows what it recorded"));
  Finish(grpc::Status::OK);
}

void WatchWriter::OnCancel() {
  Cancelled();
  std::lock_guard lock(mu_);
  cancelled_ = true;
  // A write in flight finishes the call in OnWriteDone, whatever its outcome.
  if (!finished_ && !writing_) {
    finished_ = true;
    Finish(grpc::Status::CANCELLED);
  }
}

WatchReactor::WatchReactor(grpc::CallbackServerContext* context, WatchHub* hub,
                           const v1::WatchRequest& request, int64_t now_ns)
    : WatchWriter(context, request.session()), hub_(hub) {
  subscription_ = hub_->Subscribe(
      WatchFilter::From(request), [this] { WriteNext(); }, now_ns);
}

void WatchReactor::OnDone() {
  hub_->Unsubscribe(subscription_);  // no notify after this returns
  delete this;
}

}  // namespace ntprof::collector
