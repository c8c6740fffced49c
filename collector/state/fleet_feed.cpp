#include "fleet_feed.h"

#include <fstream>
#include <memory>
#include <queue>

#include "absl/strings/str_cat.h"
#include "ntp_reader.h"

namespace ntprof::collector {
namespace {

constexpr char kMarker[] = "clickhouse.pending";

struct FileCursor {
  std::unique_ptr<NtpReader> reader;
  v1::RecordBatch batch;
  int next = 0;

  // True while a record is at hand.
  absl::StatusOr<bool> Ready() {
    while (next >= batch.records_size()) {
      batch.Clear();
      next = 0;
      auto more = reader->Next(&batch);
      if (!more.ok()) return more.status();
      if (!*more) return false;
    }
    return true;
  }
  int64_t WallOfNext() const {
    const v1::Record& r = batch.records(next);
    uint64_t last = 0;
    for (uint64_t s : r.stamps()) last = std::max(last, s);
    const auto& h = reader->header();
    return static_cast<int64_t>(h.start_wall_ns()) +
           (static_cast<int64_t>(last) - static_cast<int64_t>(h.start_mono_ns()));
  }
};

}  // namespace

bool FleetPending(const std::filesystem::path& session_dir) {
  std::error_code ec;
  return std::filesystem::exists(session_dir / kMarker, ec);
}

absl::Status MarkFleetPending(const std::filesystem::path& session_dir) {
  std::ofstream out(session_dir / kMarker);
  out << "rows of this session may not be in ClickHouse yet; the collector reloads them\n";
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", (session_dir / kMarker).string()));
  return absl::OkStatus();
}

void ClearFleetPending(const std::filesystem::path& session_dir) {
  std::error_code ec;
  std::filesystem::remove(session_dir / kMarker, ec);
}

absl::Status ForEachStoredRecord(const std::vector<std::string>& paths,
                                 const std::function<void(v1::Record)>& on_record) {
  std::vector<FileCursor> cursors(paths.size());
  auto later = [&](size_t a, size_t b) {
    return cursors[a].WallOfNext() > cursors[b].WallOfNext();
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < paths.size(); ++i) {
    // A file the collector was writing when it died ends in a torn frame: read what is intact.
    auto reader = NtpReader::Open(paths[i], NtpReadOptions{.salvage = true});
    if (!reader.ok()) return reader.status();
    cursors[i].reader = std::move(*reader);
    auto ready = cursors[i].Ready();
    if (!ready.ok()) return ready.status();
    if (*ready) heap.push(i);
  }
  while (!heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    FileCursor& c = cursors[i];
    v1::Record record = c.batch.records(c.next++);
    if (record.agent().empty()) record.set_agent(c.reader->header().hostname());
    on_record(std::move(record));
    auto ready = c.Ready();
    if (!ready.ok()) return ready.status();
    if (*ready) heap.push(i);
  }
  return absl::OkStatus();
}

}  // namespace ntprof::collector
