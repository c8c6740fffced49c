// Watch (WatchHub): the device counters of every batch, and each complete command as it leaves
// the live join.
#pragma once

#include "session_sink.h"
#include "watch_hub.h"

namespace ntprof::collector {

class WatchSink : public SessionSink {
 public:
  explicit WatchSink(WatchHub* watch) : watch_(watch) {}

  absl::Status OnBatch(Session& session, const AgentKey& agent,
                       const v1::RecordBatch& batch) override;
  void OnCommand(Session& session, const CommandOutcome& outcome) override;

 private:
  WatchHub* watch_;
};

}  // namespace ntprof::collector
