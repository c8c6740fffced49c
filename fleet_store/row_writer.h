// The collector's feed into ClickHouse: rows wait in a bounded in-memory queue and leave in
// batches (every batch_rows rows or flush_interval) on the writer's own thread. A batch ClickHouse
// did not accept is retried with backoff (0.5 s doubling to 10 s) until it is; meanwhile rows keep
// queueing and, past the bound, the oldest are dropped and counted. Nothing here acks an agent:
// the session's .ntp files are the log a restarted collector reloads from (docs/fleet.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "http_client.h"
#include "schema.h"

namespace ntprof::clickhouse {

struct WriterOptions {
  TableName table{"ntprof", "commands"};
  size_t max_queued_rows = 1'000'000;
  size_t batch_rows = 10'000;
  std::chrono::milliseconds flush_interval{1000};
  std::chrono::milliseconds max_backoff{10'000};
  bool create_schema = true;  // CREATE ... IF NOT EXISTS before the first insert
};

struct WriterStats {
  uint64_t rows_inserted = 0;
  uint64_t rows_dropped = 0;     // the queue was full: oldest rows given up
  uint64_t batches_inserted = 0;
  uint64_t insert_failures = 0;  // attempts ClickHouse did not accept (each retried)
  uint64_t queued = 0;           // waiting, the batch in flight included
  bool failing = false;          // the last attempt failed
};

class RowWriter {
 public:
  RowWriter(ServerOptions server, WriterOptions options);
  ~RowWriter();  // stops after one last attempt to deliver what is queued

  // Starts the thread. Checks that ClickHouse answers and creates the table; an unreachable
  // server is not fatal (the thread keeps trying), the returned status says what happened.
  absl::Status Start();

  // Queues one row (EncodeRow's line). Returns its ticket: tickets grow by one per row.
  uint64_t Add(std::string row);
  // Every row with a ticket <= delivered() was accepted by ClickHouse or dropped (counted).
  uint64_t delivered() const { return delivered_.load(); }
  uint64_t last_ticket() const;
  // Waits while the queue is more than three quarters full and ClickHouse takes rows, so a reload
  // does not push out what it queued itself; returns at once while ClickHouse fails.
  void WaitForRoom();
  WriterStats stats() const;
  // Waits until everything queued so far was delivered, or the timeout. True when delivered.
  bool Drain(std::chrono::milliseconds timeout);

 private:
  void Run();
  absl::Status EnsureSchema();

  ServerOptions server_;
  WriterOptions options_;
  std::unique_ptr<HttpClient> client_;  // the writer thread's
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable delivered_cv_;
  std::deque<std::pair<uint64_t, std::string>> queue_;
  uint64_t next_ticket_ = 1;
  size_t in_flight_ = 0;
  bool stopping_ = false;
  bool schema_ready_ = false;
  WriterStats stats_;
  std::atomic<uint64_t> delivered_{0};
  std::thread thread_;
};

}  // namespace ntprof::clickhouse
