// The fleet store (--clickhouse, docs/fleet.md): every outcome of a session's live join becomes a
// row, whichever sessions are running. A session owes rows from its first one on; its marker file
// (fleet_feed.h) stays until ClickHouse accepted them all, and a restarted collector reloads the
// stored records of a session that still owes rows.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "collector_metrics.h"
#include "row_writer.h"
#include "session_sink.h"

namespace ntprof::collector {

class FleetSink : public SessionSink {
 public:
  FleetSink(clickhouse::RowWriter* writer, CollectorMetrics* metrics, int64_t join_window_ns)
      : writer_(writer), metrics_(metrics), join_window_ns_(join_window_ns) {}

  void OnCommand(Session& session, const CommandOutcome& outcome) override;

  // The session owes rows to ClickHouse from now on: its marker makes a restart reload it.
  absl::Status OweRows(Session& session);
  // Feeds a session's stored records through its join again, for the fleet store only.
  void Reload(Session& session, int64_t now);
  // About once a second, under the registry's lock: clears the marker of stopped sessions whose
  // rows are all in ClickHouse, and adds the writer's progress to the metrics.
  void Tick(const std::map<std::string, std::unique_ptr<Session>>& sessions, int64_t now);

 private:
  clickhouse::RowWriter* writer_;
  CollectorMetrics* metrics_;
  int64_t join_window_ns_;
  clickhouse::WriterStats seen_;  // what Tick already added to the metrics
};

}  // namespace ntprof::collector
