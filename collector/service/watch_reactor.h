// Collector.Watch: one writer reactor per client. Updates wait in the client's bounded queue
// (WatchSubscription); the reactor writes one at a time (StartWrite / OnWriteDone), so a slow
// client only fills and overflows its own queue.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>

#include "ntprof/v1/collector.grpc.pb.h"
#include "watch_hub.h"

namespace ntprof::collector {

class WatchReactor final : public grpc::ServerWriteReactor<v1::WatchUpdate> {
 public:
  WatchReactor(WatchHub* hub, const v1::WatchRequest& request, int64_t now_ns);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void WriteNext();

  WatchHub* hub_;
  std::shared_ptr<WatchSubscription> subscription_;
  std::mutex mu_;
  v1::WatchUpdate current_;
  bool writing_ = false;
  bool finished_ = false;
  bool cancelled_ = false;  // OnCancel ran: no more writes
};

}  // namespace ntprof::collector
