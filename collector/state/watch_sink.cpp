#include "watch_sink.h"

#include "session.h"

namespace ntprof::collector {

absl::Status WatchSink::OnBatch(Session& session, const AgentKey& agent,
                                const v1::RecordBatch& batch) {
  for (const auto& counters : batch.counters()) {
    watch_->DispatchCounters(session.name(), session.settings().sample_rate(), agent.hostname,
                             counters);
  }
  return absl::OkStatus();
}

void WatchSink::OnCommand(Session& session, const CommandOutcome& outcome) {
  if (outcome.reloaded || !outcome.complete) return;
  watch_->Dispatch(session.name(), session.settings().sample_rate(), outcome.host, outcome.target);
}

}  // namespace ntprof::collector
