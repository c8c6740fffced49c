// A session's settings and state on disk: data_dir/sessions/<name>/session.pb (a SessionInfo),
// replaced atomically, so a restarted collector knows every session as it last was.
#pragma once

#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

absl::Status WriteSessionInfo(const std::filesystem::path& session_dir,
                              const v1::SessionInfo& info);
// The session.pb of the directory; nullopt when there is none or it is not readable. A session.pb
// written before SessionInfo.settings has its settings moved there.
std::optional<v1::SessionInfo> ReadSessionInfo(const std::filesystem::path& session_dir);

}  // namespace ntprof::collector
