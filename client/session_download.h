// Fetches a session's stored records from the collector (Collector.Export) into .ntp files that
// `ntprofctl report` reads: used by `export` and by `compare` when one side is a session.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {

struct Download {
  grpc::Status rpc;         // the call's status
  std::string local_error;  // a file could not be written (the message names it)
  std::vector<std::string> files;
  bool ok() const { return rpc.ok() && local_error.empty(); }
};

// single_file: write the one file of the session to `out` (refused when the session has more);
// else `out` is a directory that receives <hostname>-<role>.ntp per agent.
Download DownloadSession(v1::Collector::Stub& stub, const std::string& session,
                         const std::filesystem::path& out, bool single_file);

}  // namespace ntprof::cli
