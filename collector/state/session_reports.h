// Report, Compare and Export of a session: the file tools of ntprof_core run on the session's
// stored files, so a session report is the file report of the same records.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ntp_reader.h"
#include "ntprof/v1/collector.pb.h"
#include "report.h"
#include "report_builder.h"
#include "session_registry.h"

namespace ntprof::collector {

// extras: the slowest commands and the charts' data, when the request asks for them.
absl::StatusOr<Report> SessionReport(const StoredSession& session, ReportExtras extras = {});

// The session's files one after the other, as Export sends them: ExportFile, batches, trailer
// (only when the stored file has one). Sequence markers are left out.
class SessionExport {
 public:
  explicit SessionExport(StoredSession session) : session_(std::move(session)) {}

  // Fills *out with the next message; false at the end.
  absl::StatusOr<bool> Next(v1::ExportMessage* out);

 private:
  StoredSession session_;
  size_t next_file_ = 0;
  std::unique_ptr<NtpReader> reader_;
};

}  // namespace ntprof::collector
