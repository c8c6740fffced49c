#include "session_reports.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "recording_set.h"

namespace ntprof::collector {
namespace {

// A note the file tools write about a file that was never closed or ends in a cut frame.
bool AboutOpenFile(const std::string& note) {
  return note.find(": not finalized") != std::string::npos ||
         note.find(": truncated;") != std::string::npos;
}

// Files an agent went on from in a later segment: a collector restart cut them (the agent replayed
// what was not stored), so they are open but the agent did not stop without closing its recording.
std::set<std::string> ContinuedFiles(const std::vector<StoredFile>& files) {
  std::map<AgentKey, int> last_segment;
  for (const StoredFile& f : files) {
    auto [it, fresh] = last_segment.emplace(f.agent, f.segment);
    if (!fresh) it->second = std::max(it->second, f.segment);
  }
  std::set<std::string> continued;
  for (const StoredFile& f : files) {
    if (f.segment < last_segment.at(f.agent)) continued.insert(f.path);
  }
  return continued;
}

bool AboutFile(const std::string& note, const std::set<std::string>& paths) {
  for (const std::string& path : paths) {
    if (absl::StartsWith(note, absl::StrCat(path, ": "))) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<Report> SessionReport(const StoredSession& session, ReportExtras extras) {
  if (session.files.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "session '", session.name, "' has no records yet; `ntprofctl status` shows its agents"));
  }
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> short_names;
  for (const StoredFile& f : session.files) {
    paths.push_back(f.path);
    short_names.emplace_back(f.path, ExportName(f));
  }
  // A running session's last frame may be half written right now: read the intact ones.
  ReportOptions options;
  options.read.salvage = true;
  options.extras = extras;
  auto set = RecordingSet::Open(paths, options);
  if (!set.ok()) return set.status();
  auto report = set->BuildReport();
  if (!report.ok()) return report.status();
  report->title = absl::StrCat("session ", session.name);
  const std::set<std::string> continued = ContinuedFiles(session.files);
  std::vector<std::string> notes;
  for (const std::string& note : report->notes) {
    if (AboutOpenFile(note) && (session.running || AboutFile(note, continued))) continue;
    notes.push_back(absl::StrReplaceAll(note, short_names));
  }
  // What the files cannot tell: batches an agent declared lost, agents that could not record.
  notes.insert(notes.begin(), session.notes.begin(), session.notes.end());
  if (session.running) {
    notes.insert(notes.begin(), absl::StrCat("session ", session.name,
                                             " is still running: records received so far"));
  }
  report->notes = std::move(notes);
  return report;
}

absl::StatusOr<bool> SessionExport::Next(v1::ExportMessage* out) {
  out->Clear();
  while (true) {
    if (!reader_) {
      if (next_file_ >= session_.files.size()) return false;
      const StoredFile& file = session_.files[next_file_++];
      auto reader = NtpReader::Open(file.path, NtpReadOptions{.salvage = true});
      if (!reader.ok()) return reader.status();
      reader_ = std::move(*reader);
      out->mutable_file()->set_name(ExportName(file));
      *out->mutable_file()->mutable_header() = reader_->header();
      return true;
    }
    v1::RecordBatch* batch = out->mutable_batch();
    auto more = reader_->Next(batch);
    if (!more.ok()) return more.status();
    if (*more) {
      if (batch->records_size() == 0 && batch->counters_size() == 0) continue;  // a marker
      return true;
    }
    out->Clear();
    const bool finalized = reader_->finalized();
    if (finalized) *out->mutable_trailer() = reader_->trailer();
    reader_.reset();
    if (finalized) return true;
  }
}

}  // namespace ntprof::collector
