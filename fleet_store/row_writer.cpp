#include "row_writer.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "command_row.h"
#include "spdlog/spdlog.h"

namespace ntprof::clickhouse {

RowWriter::RowWriter(ServerOptions server, WriterOptions options)
    : server_(std::move(server)), options_(std::move(options)) {
  if (options_.max_queued_rows == 0) options_.max_queued_rows = 1;
  if (options_.batch_rows == 0) options_.batch_rows = 1;
}

RowWriter::~RowWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

absl::Status RowWriter::EnsureSchema() {
  if (!options_.create_schema) return absl::OkStatus();
  for (const std::string& sql : CreateStatements(options_.table)) {
    if (auto st = client_->Execute(sql); !st.ok()) return st;
  }
  // A table an older ntprof made lacks the columns added since (a new stage): the inserts would
  // be refused, so the columns are added first.
  std::set<std::string> existing;
  absl::Status st = client_->Select(ColumnNamesQuery(options_.table), [&](absl::string_view name) {
    existing.emplace(name);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  for (const std::string& sql : AddMissingColumnStatements(options_.table, existing)) {
    spdlog::info("ClickHouse table {} was made by an older ntprof: {}", options_.table.Qualified(),
                 sql);
    if (st = client_->Execute(sql); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status RowWriter::Start() {
  client_ = std::make_unique<HttpClient>(server_);
  absl::Status st = EnsureSchema();
  schema_ready_ = st.ok();
  thread_ = std::thread([this] { Run(); });
  return st;
}

uint64_t RowWriter::Add(std::string row) {
  uint64_t ticket;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    ticket = next_ticket_++;
    queue_.emplace_back(ticket, std::move(row));
    if (queue_.size() > options_.max_queued_rows) {
      queue_.pop_front();
      ++stats_.rows_dropped;
    }
    wake = queue_.size() >= options_.batch_rows;
  }
  if (wake) wake_.notify_one();
  return ticket;
}

uint64_t RowWriter::last_ticket() const {
  std::lock_guard lock(mu_);
  return next_ticket_ - 1;
}

void RowWriter::WaitForRoom() {
  std::unique_lock lock(mu_);
  const size_t high = std::max<size_t>(1, options_.max_queued_rows * 3 / 4);
  if (queue_.size() >= options_.batch_rows) wake_.notify_one();
  delivered_cv_.wait(lock, [&] { return queue_.size() < high || stats_.failing || stopping_; });
}

WriterStats RowWriter::stats() const {
  std::lock_guard lock(mu_);
  WriterStats s = stats_;
  s.queued = queue_.size() + in_flight_;
  return s;
}

bool RowWriter::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const uint64_t target = next_ticket_ - 1;
  wake_.notify_one();
  return delivered_cv_.wait_for(lock, timeout, [&] { return delivered_.load() >= target; });
}

void RowWriter::Run() {
  std::chrono::milliseconds backoff{500};
  std::string body;
  uint64_t batch_last = 0;
  size_t batch_size = 0;
  const std::string columns = ColumnList();
  std::unique_lock lock(mu_);
  for (;;) {
    if (batch_size == 0) {
      wake_.wait_for(lock, options_.flush_interval,
                     [&] { return stopping_ || queue_.size() >= options_.batch_rows; });
      if (queue_.empty()) {
        // Rows dropped from a full queue are delivered in the sense of delivered(): given up.
        delivered_ = next_ticket_ - 1;
        delivered_cv_.notify_all();
        if (stopping_) return;
        continue;
      }
      body.clear();
      while (!queue_.empty() && batch_size < options_.batch_rows) {
        body += queue_.front().second;
        batch_last = queue_.front().first;
        queue_.pop_front();
        ++batch_size;
      }
      in_flight_ = batch_size;
    }
    const bool stopping = stopping_;
    lock.unlock();
    absl::Status st = schema_ready_ ? absl::OkStatus() : EnsureSchema();
    if (st.ok()) {
      schema_ready_ = true;
      st = client_->Insert(options_.table.Qualified(), columns, body);
    }
    lock.lock();
    if (st.ok()) {
      if (stats_.failing) spdlog::info("ClickHouse accepts rows again");
      stats_.failing = false;
      stats_.rows_inserted += batch_size;
      ++stats_.batches_inserted;
      batch_size = 0;
      in_flight_ = 0;
      // Everything before the batch's last ticket was sent or dropped: tickets leave in order.
      delivered_ = batch_last;
      delivered_cv_.notify_all();
      backoff = std::chrono::milliseconds{500};
      continue;
    }
    ++stats_.insert_failures;
    if (!stats_.failing) {
      spdlog::warn("ClickHouse did not take {} rows ({}); holding them and retrying", batch_size,
                   std::string(st.message()));
    }
    stats_.failing = true;
    delivered_cv_.notify_all();  // WaitForRoom stops waiting
    if (st.code() == absl::StatusCode::kInvalidArgument) {
      // ClickHouse refused the rows themselves (a table of other columns): retrying cannot help.
      spdlog::error("ClickHouse refused a batch of {} rows, dropping it: {}", batch_size,
                    std::string(st.message()));
      stats_.rows_dropped += batch_size;
      batch_size = 0;
      in_flight_ = 0;
      delivered_ = batch_last;
      delivered_cv_.notify_all();
      continue;
    }
    if (stopping) {
      stats_.rows_dropped += batch_size + queue_.size();
      return;
    }
    wake_.wait_for(lock, backoff, [&] { return stopping_; });
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace ntprof::clickhouse
