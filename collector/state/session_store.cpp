#include "session_store.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace ntprof::collector {

absl::Status WriteSessionInfo(const std::filesystem::path& dir, const v1::SessionInfo& info) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path tmp = dir / "session.pb.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !info.SerializeToOstream(&out)) {
      return absl::UnavailableError(absl::StrCat("cannot write ", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, dir / "session.pb", ec);  // atomic: never half a session.pb
  if (ec)
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp.string(), ": ", ec.message()));
  return absl::OkStatus();
}

std::optional<v1::SessionInfo> ReadSessionInfo(const std::filesystem::path& dir) {
  std::ifstream in(dir / "session.pb", std::ios::binary);
  v1::SessionInfo info;
  if (!in || !info.ParseFromIstream(&in) || info.name() != dir.filename().string()) {
    return std::nullopt;
  }
  if (!info.has_settings()) {
    v1::RecordingSettings* s = info.mutable_settings();
    s->set_session(info.name());
    s->set_sample_rate(info.legacy_sample_rate());
    s->set_salt(info.legacy_salt());
    s->set_duration_s(info.legacy_duration_s());
  }
  info.clear_legacy_sample_rate();
  info.clear_legacy_salt();
  info.clear_legacy_duration_s();
  return info;
}

}  // namespace ntprof::collector
