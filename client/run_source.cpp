#include "run_source.h"

#include <unistd.h>

#include <iostream>

#include "exit_codes.h"
#include "session_download.h"

namespace ntprof::cli {

SessionCopy::~SessionCopy() {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

absl::StatusOr<Report> ReportOfRun(const std::string& verb, const std::string& arg,
                                   const CollectorFlags& collector, const ReportOptions& options,
                                   SessionCopy* copy, int* exit_status) {
  if (NamesSession(arg)) {
    copy->dir = std::filesystem::temp_directory_path() /
                ("ntprofctl-" + verb + "-" + std::to_string(::getpid()) + "-" + arg);
    int exit = WithCollector<v1::Collector>(verb, collector, [&](auto& stub, auto& target) {
      Download download = DownloadSession(stub, arg, copy->dir, false);
      if (!download.rpc.ok()) return RpcFailure(verb, target, download.rpc);
      if (!download.local_error.empty()) {
        std::cerr << "ntprofctl " << verb << ": " << download.local_error << "\n";
        return kFailed;
      }
      return kOk;
    });
    if (exit != kOk) {
      *exit_status = exit;
      return absl::UnavailableError("");  // already reported
    }
    auto report = ReportOfRun(verb, copy->dir.string(), {}, options, nullptr, exit_status);
    if (report.ok()) report->title = "session " + arg;
    return report;
  }
  auto files = ExpandRecordingArgs({arg});
  if (!files.ok()) return files.status();
  auto set = RecordingSet::Open(*files, options);
  if (!set.ok()) return set.status();
  return set->BuildReport();
}

}  // namespace ntprof::cli
