#include "metrics_sink.h"

#include "loss_counters.h"
#include "session.h"

namespace ntprof::collector {

absl::Status MetricsSink::OnBatch(Session& session, const AgentKey& agent,
                                  const v1::RecordBatch& batch) {
  metrics_->Add(Counter::kBatchesReceived);
  metrics_->Add(Counter::kRecordsReceived, static_cast<uint64_t>(batch.records_size()));
  if (batch.has_losses()) {
    v1::LossCounters& previous = losses_[{session.name(), agent}];
    metrics_->AddAgentLosses(LossDelta(previous, batch.losses()));
    previous = batch.losses();
  }
  return absl::OkStatus();
}

void MetricsSink::OnCommand(Session& session, const CommandOutcome& outcome) {
  if (outcome.reloaded) return;  // counted when it first arrived
  if (outcome.host && outcome.target) {
    metrics_->Add(Counter::kJoinMatched);
  } else if (!outcome.complete) {
    metrics_->Add(outcome.host ? Counter::kJoinHostOnly : Counter::kJoinTargetOnly);
    return;
  }
  metrics_->ObserveCommand(session.name(), outcome.host, outcome.target);
}

}  // namespace ntprof::collector
