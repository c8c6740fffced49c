// The .ntp files of one run (host and/or target halves), checked to belong together, streamed in
// approximate time order through the join and into a report. Works on files larger than memory:
// only the records waiting for their other half are held.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "join_engine.h"
#include "ntp_reader.h"
#include "report.h"
#include "report_builder.h"

namespace ntprof {

struct ReportOptions {
  NtpReadOptions read;
  JoinOptions join;
  ReportExtras extras;  // the slowest commands, the charts' data
};

// How a recording's header differs from another's in a setting both must share to be read together
// (sample rate, salt, session): in words, and what a user recording files should do about it.
struct HeaderMisfit {
  std::string what;  // "salt 7, not 42"; empty when the two fit together
  std::string hint;  // "both sides of a run must be recorded with the same --salt"
};
HeaderMisfit MisfitOf(const v1::FileHeader& header, const v1::FileHeader& reference);

class RecordingSet {
 public:
  // Opens every file and checks the headers: same sample rate and salt, same session.
  static absl::StatusOr<RecordingSet> Open(const std::vector<std::string>& paths,
                                           ReportOptions options = {});

  // Reads all records once. Errors (a corrupt batch, runs that do not overlap in time) come before
  // any output.
  absl::StatusOr<Report> BuildReport();

  bool has_host() const { return has_host_; }
  bool has_target() const { return has_target_; }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  RecordingSet() = default;

  std::vector<std::string> paths_;
  ReportOptions options_;
  std::vector<v1::FileHeader> headers_;
  bool has_host_ = false;
  bool has_target_ = false;
};

// "a.ntp" -> ["a.ntp"]; "dir" -> its *.ntp files; "a.ntp,b.ntp" -> both. Used by report and compare.
absl::StatusOr<std::vector<std::string>> ExpandRecordingArgs(const std::vector<std::string>& args);

}  // namespace ntprof
