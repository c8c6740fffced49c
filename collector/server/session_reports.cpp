#include "session_reports.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "recording_set.h"

namespace ntprof::collector {

absl::StatusOr<Report> SessionReport(const StoredSession& session) {
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
  auto set = RecordingSet::Open(paths, options);
  if (!set.ok()) return set.status();
  auto report = set->BuildReport();
  if (!report.ok()) return report.status();
  report->title = absl::StrCat("session ", session.name);
  std::vector<std::string> notes;
  for (const std::string& note : report->notes) {
    const bool about_open_file = note.find(": not finalized") != std::string::npos ||
                                 note.find(": truncated;") != std::string::npos;
    if (session.running && about_open_file) continue;
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
