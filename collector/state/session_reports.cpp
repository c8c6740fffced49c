#include "session_reports.h"

#include <algorithm>
#include <map>
#include <optional>
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

// The stored file a note of the file tools is about ("<path>: ..."), or nullptr.
const StoredFile* FileOfNote(const std::string& note, const std::vector<StoredFile>& files) {
  for (const StoredFile& f : files) {
    if (absl::StartsWith(note, absl::StrCat(f.path, ": "))) return &f;
  }
  return nullptr;
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

// What the session's report says about a file the file tools found open or cut: nothing while the
// session runs (its files are being written) or when the agent went on in a later segment; the
// collector's stop when that is what left it open (the tools' note would blame the agent, and name
// a flag the collector already uses); else the tools' note.
std::optional<std::string> OpenFileNote(const std::string& note, const StoredFile* file,
                                        const StoredSession& session,
                                        const std::set<std::string>& continued) {
  if (session.running || (file && continued.count(file->path) != 0)) return std::nullopt;
  if (file && file->open_when_collector_stopped) {
    return absl::StrCat(ExportName(*file),
                        ": the collector stopped (killed, crashed or restarted) before this file "
                        "was closed, and ",
                        file->agent.hostname,
                        " sent nothing more for the session since; read up to its last batch");
  }
  return note;
}

// One setting of recording files: a file can be read with another only when they share it.
struct Settings {
  v1::FileHeader header;  // its sample rate, salt and session
  std::set<std::string> agents;
};

// Files whose sample rate, salt or session differ from those most of the session's agents recorded
// with cannot be joined with theirs: they are left out of the report, each named in a note, so one
// such agent does not hide what the others recorded.
absl::StatusOr<std::vector<StoredFile>> FilesThatFit(const std::vector<StoredFile>& files,
                                                     std::vector<std::string>* notes) {
  std::vector<v1::FileHeader> headers;
  std::vector<Settings> settings;  // in the order first seen
  for (const StoredFile& f : files) {
    auto reader = NtpReader::Open(f.path, NtpReadOptions{.salvage = true});
    if (!reader.ok()) return reader.status();
    headers.push_back((*reader)->header());
    auto same = std::find_if(settings.begin(), settings.end(), [&](const Settings& s) {
      return MisfitOf(headers.back(), s.header).what.empty();
    });
    if (same == settings.end()) same = settings.insert(settings.end(), {headers.back(), {}});
    same->agents.insert(f.agent.hostname);
  }
  // The most agents' settings; of equals, the first file's.
  const Settings& most = *std::max_element(
      settings.begin(), settings.end(),
      [](const Settings& a, const Settings& b) { return a.agents.size() < b.agents.size(); });
  std::vector<StoredFile> fit;
  for (size_t i = 0; i < files.size(); ++i) {
    const HeaderMisfit misfit = MisfitOf(headers[i], most.header);
    if (misfit.what.empty()) {
      fit.push_back(files[i]);
      continue;
    }
    notes->push_back(absl::StrCat(ExportName(files[i]), ": ", misfit.what, " (that of the ",
                                  most.agents.size(), " agent(s) it differs from): left out of "
                                  "this report, its commands cannot be joined with theirs"));
  }
  return fit;
}

}  // namespace

absl::StatusOr<Report> SessionReport(const StoredSession& session, ReportExtras extras) {
  if (session.files.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "session '", session.name, "' has no records yet; `ntprofctl status` shows its agents"));
  }
  std::vector<std::string> left_out;
  auto files = FilesThatFit(session.files, &left_out);
  if (!files.ok()) return files.status();
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> short_names;
  for (const StoredFile& f : *files) {
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
  const std::set<std::string> continued = ContinuedFiles(*files);
  std::vector<std::string> notes;
  for (const std::string& note : report->notes) {
    std::optional<std::string> said = note;
    if (AboutOpenFile(note)) said = OpenFileNote(note, FileOfNote(note, *files), session, continued);
    if (said) notes.push_back(absl::StrReplaceAll(*said, short_names));
  }
  // What the files cannot tell: batches an agent declared lost, agents that could not record.
  notes.insert(notes.begin(), left_out.begin(), left_out.end());
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
