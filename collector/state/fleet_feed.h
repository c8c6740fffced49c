// The collector's side of the fleet store (docs/fleet.md): which sessions may still owe rows to
// ClickHouse, and the replay of a session's stored records. A session's .ntp files are the log
// the rows come from: a session keeps a marker file in its directory from its start until every
// row of it was accepted by ClickHouse; a collector that starts and finds the marker (or a running
// session) reads the files through the join again and re-inserts, and ClickHouse keeps one row
// per command key.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof::collector {

bool FleetPending(const std::filesystem::path& session_dir);
absl::Status MarkFleetPending(const std::filesystem::path& session_dir);
void ClearFleetPending(const std::filesystem::path& session_dir);

// Every record of the files, in approximate wall-time order across the files (as the file report
// merges them), so both halves of a command meet soon after each other. A record without an agent
// gets its file's hostname.
absl::Status ForEachStoredRecord(const std::vector<std::string>& paths,
                                 const std::function<void(v1::Record)>& on_record);

}  // namespace ntprof::collector
