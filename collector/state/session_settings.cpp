#include "session_settings.h"

#include <fstream>
#include <random>
#include <regex>

#include "absl/strings/str_cat.h"
#include "recording_settings.h"
#include "session.h"

namespace ntprof::collector {

absl::Status CheckSessionName(const std::string& name) {
  // Session names become directory names: keep them to a safe alphabet.
  static const std::regex kName("[A-Za-z0-9_][A-Za-z0-9._-]{0,63}");
  if (std::regex_match(name, kName)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("session name '", name, "' is not valid: use 1-64 of A-Z a-z 0-9 . _ - ",
                   "(not starting with . or -)"));
}

absl::StatusOr<v1::RecordingSettings> NewSessionSettings(const std::string& name,
                                                         const v1::RecordingSettings& asked,
                                                         uint64_t fleet_salt) {
  if (auto st = CheckSessionName(name); !st.ok()) return st;
  if (auto st = CheckRecordingSettings(asked); !st.ok()) return st;
  v1::RecordingSettings settings = asked;
  settings.set_session(name);
  settings.set_role(v1::ROLE_UNKNOWN);  // each agent's own, set when it is sent
  if (settings.salt() == 0) settings.set_salt(fleet_salt);
  return settings;
}

v1::RecordingSettings SettingsForAgent(const Session& session, v1::Role role, int64_t now_ns) {
  v1::RecordingSettings settings = session.settings();
  settings.set_role(role);
  if (const int64_t end = session.EndNs(); end != 0) {
    // Rounded up, at least 1 s: the collector's own stop at the end is what ends the session.
    const int64_t left_ns = std::max<int64_t>(end - now_ns, 1);
    settings.set_duration_s(static_cast<uint32_t>((left_ns + 999'999'999) / 1'000'000'000));
  }
  return settings;
}

absl::StatusOr<uint64_t> FleetSalt(const std::filesystem::path& data_dir, uint64_t configured) {
  const std::filesystem::path path = data_dir / "fleet.salt";
  uint64_t salt = configured;
  if (salt == 0) {
    std::ifstream in(path);
    if (in >> std::hex >> salt && salt != 0) return salt;
    std::random_device rd;
    salt = (uint64_t{rd()} << 32) | rd();
    if (salt == 0) salt = 1;
  }
  std::ofstream out(path, std::ios::trunc);
  out << std::hex << salt << "\n";
  if (!out.flush()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path.string(), "; pass --data-dir with a writable directory"));
  }
  return salt;
}

}  // namespace ntprof::collector
