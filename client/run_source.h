// One side of a comparison (compare's BASE or NEW, run's --baseline or its session) read into a
// Report: recordings (a file, a directory of .ntp files, a comma-separated list) or the name of a
// session on the collector, whose records are fetched into a temporary directory first.
#pragma once

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "collector_target.h"
#include "recording_set.h"
#include "report.h"

namespace ntprof::cli {

// The temporary directory of a fetched session, removed with it.
struct SessionCopy {
  std::filesystem::path dir;
  SessionCopy() = default;
  SessionCopy(const SessionCopy&) = delete;
  SessionCopy& operator=(const SessionCopy&) = delete;
  ~SessionCopy();
};

// On failure either *exit_status is set (a collector failure, already reported on stderr) or the
// status says what was wrong with the recordings (the caller prints it: bad input).
absl::StatusOr<Report> ReportOfRun(const std::string& verb, const std::string& arg,
                                   const CollectorFlags& collector, const ReportOptions& options,
                                   SessionCopy* copy, int* exit_status);

}  // namespace ntprof::cli
