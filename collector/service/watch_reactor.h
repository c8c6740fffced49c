// Collector.Watch: one writer reactor per client. Updates wait in the client's bounded queue
// (WatchSubscription); the reactor writes one at a time (StartWrite / OnWriteDone), so a slow
// client only fills and overflows its own queue.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ntprof/v1/collector.grpc.pb.h"
#include "watch_hub.h"

namespace ntprof::collector {

// The write side of every Watch: one update at a time, the next taken from NextUpdate() when the
// last write is done or WriteNext() is called (an update was queued). Once Ended() and every
// update is written, the call finishes as the watched session's end (common/watch_end.h).
class WatchWriter : public grpc::ServerWriteReactor<v1::WatchUpdate> {
 public:
  WatchWriter(grpc::CallbackServerContext* context, std::string session)
      : context_(context), session_(std::move(session)) {}

  void OnWriteDone(bool ok) override;
  void OnCancel() override;

 protected:
  void WriteNext();
  virtual std::optional<v1::WatchUpdate> NextUpdate() = 0;
  // The watched session ended and NextUpdate() will return nothing new: asked before it.
  virtual bool Ended() const = 0;
  virtual void Cancelled() = 0;  // the client went away: stop producing updates

 private:
  void FinishAsEnded();  // under mu_

  grpc::CallbackServerContext* const context_;
  const std::string session_;
  std::mutex mu_;
  v1::WatchUpdate current_;
  bool writing_ = false;
  bool finished_ = false;
  bool cancelled_ = false;  // OnCancel ran: no more writes
};

class WatchReactor final : public WatchWriter {
 public:
  WatchReactor(grpc::CallbackServerContext* context, WatchHub* hub,
               const v1::WatchRequest& request, int64_t now_ns);

  void OnDone() override;

 private:
  std::optional<v1::WatchUpdate> NextUpdate() override { return subscription_->Next(); }
  bool Ended() const override { return subscription_->ended(); }
  void Cancelled() override { hub_->Unsubscribe(subscription_); }

  WatchHub* hub_;
  std::shared_ptr<WatchSubscription> subscription_;
};

}  // namespace ntprof::collector
