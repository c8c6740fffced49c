// Collector.Watch: one writer reactor per client. Updates wait in the client's bounded queue
// (WatchSubscription); the reactor writes one at a time (StartWrite / OnWriteDone), so a slow
// client only fills and overflows its own queue.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <optional>

#include "ntprof/v1/collector.grpc.pb.h"
#include "watch_hub.h"

namespace ntprof::collector {

// The write side of every Watch: one update at a time, the next taken from NextUpdate() when the
// last write is done or WriteNext() is called (an update was queued).
class WatchWriter : public grpc::ServerWriteReactor<v1::WatchUpdate> {
 public:
  void OnWriteDone(bool ok) override;
  void OnCancel() override;

 protected:
  void WriteNext();
  virtual std::optional<v1::WatchUpdate> NextUpdate() = 0;
  virtual void Cancelled() = 0;  // the client went away: stop producing updates

 private:
  std::mutex mu_;
  v1::WatchUpdate current_;
  bool writing_ = false;
  bool finished_ = false;
  bool cancelled_ = false;  // OnCancel ran: no more writes
};

class WatchReactor final : public WatchWriter {
 public:
  WatchReactor(WatchHub* hub, const v1::WatchRequest& request, int64_t now_ns);

  void OnDone() override;

 private:
  std::optional<v1::WatchUpdate> NextUpdate() override { return subscription_->Next(); }
  void Cancelled() override { hub_->Unsubscribe(subscription_); }

  WatchHub* hub_;
  std::shared_ptr<WatchSubscription> subscription_;
};

}  // namespace ntprof::collector
