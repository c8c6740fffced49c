#include "recording_set.h"

#include <algorithm>
#include <filesystem>
#include <queue>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "loss_counters.h"
#include "report_builder.h"
#include "transport_name.h"

namespace ntprof {
namespace {

uint64_t LastStamp(const v1::Record& r) {
  uint64_t last = 0;
  for (uint64_t s : r.stamps()) last = std::max(last, s);
  return last;
}

// One open file, positioned at its next record.
struct Cursor {
  std::unique_ptr<NtpReader> reader;
  v1::RecordBatch batch;
  int next = 0;
  bool done = false;
  uint64_t last_mono = 0;      // latest stamp seen: the file's end when it has no trailer
  v1::LossCounters losses;     // cumulative, from the latest batch

  // Approximate wall time of a record: only for ordering and the join window.
  int64_t ArrivalOf(const v1::Record& r) const {
    const auto& h = reader->header();
    return static_cast<int64_t>(h.start_wall_ns()) +
           (static_cast<int64_t>(LastStamp(r)) - static_cast<int64_t>(h.start_mono_ns()));
  }
  int64_t SpanNs() const {
    const auto& h = reader->header();
    uint64_t end = reader->finalized() && reader->trailer().end_mono_ns() != 0
                       ? reader->trailer().end_mono_ns()
                       : last_mono;
    return end > h.start_mono_ns() ? static_cast<int64_t>(end - h.start_mono_ns()) : 0;
  }
  int64_t WallStart() const { return static_cast<int64_t>(reader->header().start_wall_ns()); }
  int64_t WallEnd() const { return WallStart() + SpanNs(); }
};

absl::Status Advance(Cursor* c, ReportBuilder* builder) {
  while (c->next >= c->batch.records_size()) {
    c->batch.Clear();
    c->next = 0;
    auto more = c->reader->Next(&c->batch);
    if (!more.ok()) return more.status();
    if (!*more) {
      c->done = true;
      return absl::OkStatus();
    }
    for (const auto& counters : c->batch.counters()) builder->AddCounters(counters);
    if (c->batch.has_losses()) c->losses = c->batch.losses();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandRecordingArgs(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    for (absl::string_view part : absl::StrSplit(arg, ',', absl::SkipEmpty())) {
      std::filesystem::path p{std::string(part)};
      std::error_code ec;
      if (std::filesystem::is_directory(p, ec)) {
        std::vector<std::string> in_dir;
        for (const auto& entry : std::filesystem::directory_iterator(p, ec)) {
          if (entry.path().extension() == ".ntp") in_dir.push_back(entry.path().string());
        }
        if (in_dir.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(p.string(), ": no .ntp files in directory"));
        }
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
      } else {
        files.push_back(p.string());
      }
    }
  }
  if (files.empty()) return absl::InvalidArgumentError("no recording given");
  return files;
}

HeaderMisfit MisfitOf(const v1::FileHeader& h, const v1::FileHeader& ref) {
  if (h.sample_rate() != ref.sample_rate()) {
    return {absl::StrCat("sampled 1 in ", h.sample_rate(), ", not 1 in ", ref.sample_rate()),
            "both sides of a run must be recorded with the same -s"};
  }
  if (h.salt() != ref.salt()) {
    return {absl::StrCat("salt ", h.salt(), ", not ", ref.salt()),
            "both sides of a run must be recorded with the same --salt"};
  }
  if (!h.session().empty() && !ref.session().empty() && h.session() != ref.session()) {
    return {absl::StrCat("from session '", h.session(), "', not '", ref.session(), "'"),
            "unrelated runs"};
  }
  return {};
}

absl::StatusOr<RecordingSet> RecordingSet::Open(const std::vector<std::string>& paths,
                                                ReportOptions options) {
  RecordingSet set;
  set.paths_ = paths;
  set.options_ = options;
  for (const std::string& path : paths) {
    auto reader = NtpReader::Open(path, options.read);
    if (!reader.ok()) return reader.status();
    const v1::FileHeader& h = (*reader)->header();
    if (!set.headers_.empty()) {
      if (const HeaderMisfit misfit = MisfitOf(h, set.headers_.front()); !misfit.what.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": ", misfit.what, " as ", paths.front(), "; ", misfit.hint));
      }
    }
    if (h.role() == v1::ROLE_HOST) set.has_host_ = true;
    if (h.role() == v1::ROLE_TARGET) set.has_target_ = true;
    if (h.role() != v1::ROLE_HOST && h.role() != v1::ROLE_TARGET) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": header names no role (corrupt?)"));
    }
    set.headers_.push_back(h);
  }
  return set;
}

absl::StatusOr<Report> RecordingSet::BuildReport() {
  const Scope scope = has_host_ && has_target_ ? Scope::kJoined
                      : has_host_              ? Scope::kHostOnly
                                               : Scope::kTargetOnly;
  ReportBuilder builder(scope, options_.extras);
  JoinEngine join(options_.join,
                  [&](const v1::Record* h, const v1::Record* t) { builder.Add(h, t); });

  std::vector<Cursor> cursors(paths_.size());
  for (size_t i = 0; i < paths_.size(); ++i) {
    auto reader = NtpReader::Open(paths_[i], options_.read);
    if (!reader.ok()) return reader.status();
    cursors[i].reader = std::move(*reader);
    const v1::FileHeader& h = cursors[i].reader->header();
    builder.SetClock(h.hostname(), static_cast<int64_t>(h.start_wall_ns()) -
                                       static_cast<int64_t>(h.start_mono_ns()));
    if (auto st = Advance(&cursors[i], &builder); !st.ok()) return st;
  }

  // k-way merge on approximate wall time, so both halves of a command meet within the window.
  auto later = [&](size_t a, size_t b) {
    const Cursor& ca = cursors[a];
    const Cursor& cb = cursors[b];
    return ca.ArrivalOf(ca.batch.records(ca.next)) > cb.ArrivalOf(cb.batch.records(cb.next));
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (!cursors[i].done) heap.push(i);
  }
  while (!heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    Cursor& c = cursors[i];
    v1::Record record = c.batch.records(c.next++);
    // Records name their agent when it streamed them; a file's header names it for all.
    if (record.agent().empty()) record.set_agent(c.reader->header().hostname());
    c.last_mono = std::max(c.last_mono, LastStamp(record));
    const int64_t arrival = c.ArrivalOf(record);
    // A local block device's command has no target half to wait for: it is complete alone.
    if (scope == Scope::kJoined && record.transport() != v1::TRANSPORT_LOCAL) {
      join.Add(std::move(record), arrival);
      join.Expire(arrival);
    } else {
      builder.Add(record.role() == v1::ROLE_HOST ? &record : nullptr,
                  record.role() == v1::ROLE_TARGET ? &record : nullptr);
    }
    if (auto st = Advance(&c, &builder); !st.ok()) return st;
    if (!c.done) heap.push(i);
  }
  join.Flush();

  // Halves of one run must overlap in time; files of two unrelated runs would "join" nothing.
  if (scope == Scope::kJoined) {
    for (const Cursor& h : cursors) {
      if (h.reader->header().role() != v1::ROLE_HOST || h.SpanNs() == 0) continue;
      for (const Cursor& t : cursors) {
        if (t.reader->header().role() != v1::ROLE_TARGET || t.SpanNs() == 0) continue;
        const int64_t slack = options_.join.window_ns;
        if (h.WallEnd() + slack < t.WallStart() || t.WallEnd() + slack < h.WallStart()) {
          return absl::InvalidArgumentError(absl::StrCat(
              h.reader->path(), " and ", t.reader->path(),
              " were recorded at different times (no overlap): files of unrelated runs"));
        }
      }
    }
  }

  int64_t span_ns = 0;
  std::set<std::string> transports;
  v1::LossCounters losses;
  std::vector<std::string> notes;
  for (const Cursor& c : cursors) {
    const v1::FileHeader& h = c.reader->header();
    const bool scope_side = scope == Scope::kTargetOnly ? h.role() == v1::ROLE_TARGET
                                                        : h.role() == v1::ROLE_HOST;
    if (scope_side) span_ns = std::max(span_ns, c.SpanNs());
    transports.insert(TransportName(h.transport()));
    AddLosses(c.reader->finalized() ? c.reader->trailer().losses() : c.losses, &losses);
    if (c.reader->salvaged()) {
      notes.push_back(absl::StrCat(c.reader->path(), ": truncated; read its ",
                                   c.reader->batches_read(), " intact batches (--salvage)"));
    } else if (!c.reader->finalized()) {
      notes.push_back(absl::StrCat(c.reader->path(), ": not finalized (the agent stopped without ",
                                   "closing it); read up to its last batch"));
    }
    for (const std::string& hook : h.hooks_missing()) {
      notes.push_back(absl::StrCat(h.hostname(), ": optional hook ", hook,
                                   " was not attached; its component is absent"));
    }
  }

  JoinStats stats = join.stats();
  if (scope != Scope::kJoined) {
    for (const Cursor& c : cursors) {
      (c.reader->header().role() == v1::ROLE_HOST ? stats.host : stats.target) +=
          c.reader->records_read();
    }
  }
  // A recording often starts before the workload and stops after it: rates over its I/O only.
  Report report = builder.Build(headers_.front().sample_rate(), span_ns, &stats, RateSpan::kIo);
  report.title = absl::StrJoin(paths_, ", ");
  // What the records say (an SPDK or user-space recording's header names no transport of its
  // own: its records do); the headers only when there was no record.
  if (report.transport.empty()) report.transport = transports.size() == 1 ? *transports.begin() : "mixed";
  report.losses = losses;
  report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
  return report;
}

}  // namespace ntprof
