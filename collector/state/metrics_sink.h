// The Prometheus metrics (CollectorMetrics): batches and records received, the agents' losses as
// they grow, the live join's outcomes, and each complete command's stages in the histograms,
// labelled with its session.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "collector_metrics.h"
#include "session_sink.h"

namespace ntprof::collector {

class MetricsSink : public SessionSink {
 public:
  explicit MetricsSink(CollectorMetrics* metrics) : metrics_(metrics) {}

  absl::Status OnBatch(Session& session, const AgentKey& agent,
                       const v1::RecordBatch& batch) override;
  void OnCommand(Session& session, const CommandOutcome& outcome) override;

 private:
  CollectorMetrics* metrics_;
  // The latest cumulative losses per (session, agent stream): batches carry totals.
  std::map<std::pair<std::string, AgentKey>, v1::LossCounters> losses_;
};

}  // namespace ntprof::collector
