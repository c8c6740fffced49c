#include "fleet_sink.h"

#include "command_row.h"
#include "fleet_feed.h"
#include "session.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {

void FleetSink::OnCommand(Session& session, const CommandOutcome& outcome) {
  // However the session came to be (started here, recovered, or opened through a peer of a ring),
  // it owes rows to ClickHouse from its first one on.
  if (auto st = OweRows(session); !st.ok()) spdlog::error("{}", std::string(st.message()));
  const clickhouse::CommandContext context{
      session.name(), session.settings().sample_rate(),
      outcome.host ? session.files->WallMinusMono(outcome.host->agent()) : 0,
      outcome.target ? session.files->WallMinusMono(outcome.target->agent()) : 0};
  const uint64_t ticket = writer_->Add(clickhouse::EncodeRow(context, outcome.host, outcome.target));
  uint64_t last = session.fleet_last_ticket.load();
  while (last < ticket && !session.fleet_last_ticket.compare_exchange_weak(last, ticket)) {
  }
}

absl::Status FleetSink::OweRows(Session& session) {
  if (session.fleet_pending) return absl::OkStatus();
  std::lock_guard lock(session.fleet_mu);
  if (session.fleet_pending) return absl::OkStatus();  // another join thread marked it first
  session.fleet_drops_at_start = writer_->stats().rows_dropped;
  // The marker first: a row may be queued only once a crash would reload the session. A marker
  // that cannot be written is said once, not at every row.
  absl::Status marked = MarkFleetPending(session.files->dir());
  session.fleet_pending = true;
  return marked;
}

void FleetSink::Reload(Session& session, int64_t now) {
  if (auto st = OweRows(session); !st.ok()) spdlog::error("{}", std::string(st.message()));
  std::vector<std::string> paths;
  for (const StoredFile& f : session.files->Files()) paths.push_back(f.path);
  session.fleet_reloading = true;
  uint64_t records = 0;
  // Arrival now: halves of a running session wait one window for the other half, which the agent
  // may still replay.
  absl::Status st = ForEachStoredRecord(paths, [&](v1::Record r) {
    // One record at a time, joined on this thread: at most one row per wait, so even a small
    // queue is not overrun by the reload itself.
    writer_->WaitForRoom();
    session.joins->AddNow(std::move(r), now);
    ++records;
  });
  if (!session.running()) session.joins->Flush();
  session.fleet_reloading = false;
  if (!st.ok()) {
    spdlog::error("session {}: reloading its files into ClickHouse stopped: {}", session.name(),
                  std::string(st.message()));
  }
  spdlog::info("session {}: {} stored records reloaded into ClickHouse", session.name(), records);
}

void FleetSink::Tick(const std::map<std::string, std::unique_ptr<Session>>& sessions,
                     int64_t now) {
  const clickhouse::WriterStats stats = writer_->stats();
  const uint64_t delivered = writer_->delivered();
  for (auto& [name, session] : sessions) {
    if (session->running() || !session->fleet_pending) continue;
    // Agents' last batches may follow the stop: the join keeps pairing them for a window.
    const size_t pending = session->joins->Expire(now);
    const int64_t quiet_since = static_cast<int64_t>(session->info.stop_wall_ns()) + join_window_ns_;
    if (now < quiet_since || pending != 0 || delivered < session->fleet_last_ticket) continue;
    std::lock_guard lock(session->fleet_mu);
    if (stats.rows_dropped != session->fleet_drops_at_start) continue;  // a restart reloads it
    ClearFleetPending(session->files->dir());
    session->fleet_pending = false;
    spdlog::info("session {}: every row is in ClickHouse", name);
  }
  metrics_->Add(Counter::kFleetRowsInserted, stats.rows_inserted - seen_.rows_inserted);
  metrics_->Add(Counter::kFleetRowsDropped, stats.rows_dropped - seen_.rows_dropped);
  metrics_->Add(Counter::kFleetInsertFailures, stats.insert_failures - seen_.insert_failures);
  metrics_->SetGauge(Gauge::kFleetQueued, static_cast<double>(stats.queued));
  seen_ = stats;
}

}  // namespace ntprof::collector
