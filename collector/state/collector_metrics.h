// What the collector exposes to Prometheus (GET /metrics): per-stage latency histograms with
// low-cardinality labels (session, stage, op, role = which halves: joined, host, target; a
// session's histograms stay until the collector restarts), the agents' loss
// counters per cause, and the collector's own counters (duplicates, gaps, refused input, drops).
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "ntprof/v1/record.pb.h"

namespace ntprof::collector {

enum class Counter {
  kBatchesReceived,
  kRecordsReceived,
  kDuplicateMessages,    // replays the collector already held
  kSequenceLost,         // sequence numbers declared lost by agents
  kRecordsRejected,      // impossible stamps
  kUnknownSession,       // batches for sessions the collector does not know
  kBadAgentMessages,     // protocol violations on the agent stream
  kRequestsRejected,     // ntprofctl requests refused (bad name, unknown session, ...)
  kWatchUpdatesDropped,  // summed over watch clients
  kJoinMatched,
  kJoinHostOnly,
  kJoinTargetOnly,
  kStoreErrors,  // a batch could not be written to its session's file
  kFleetRowsInserted,     // rows ClickHouse accepted (--clickhouse; replays included)
  kFleetRowsDropped,      // rows given up: the writer's queue was full (or ClickHouse refused them)
  kFleetInsertFailures,   // insert attempts ClickHouse did not accept (each retried)
  kCount,
};

// Levels the registry sets on every tick (always rendered, 0 until the first tick).
enum class Gauge {
  kSessionsRunning,
  kAgentsConnected,
  kJoinPending,  // halves waiting for their other half
  kWatchClients,
  kFleetQueued,  // rows waiting for ClickHouse
  kCount,
};

class CollectorMetrics {
 public:
  void Add(Counter counter, uint64_t n = 1) {
    counters_[static_cast<size_t>(counter)].fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Get(Counter counter) const {
    return counters_[static_cast<size_t>(counter)].load(std::memory_order_relaxed);
  }
  // Increase of an agent's cumulative loss counters since its previous batch.
  void AddAgentLosses(const v1::LossCounters& delta);
  // One complete command of a session: a pair of its live join, a record of a session recorded on
  // one side only, or a local block device's record.
  void ObserveCommand(const std::string& session, const v1::Record* host,
                      const v1::Record* target);

  void SetGauge(Gauge gauge, double value);
  std::string RenderPrometheus() const;

 private:
  static constexpr size_t kBuckets = 16;
  struct Histogram {
    std::array<uint64_t, kBuckets> counts{};  // cumulative is computed when rendering
    uint64_t count = 0;
    double sum_s = 0;
  };

  std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> counters_{};
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Histogram>
      stages_;  // session, stage, op, role
  v1::LossCounters losses_;
  std::array<double, static_cast<size_t>(Gauge::kCount)> gauges_{};
};



}  // namespace ntprof::collector
