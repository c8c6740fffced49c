// A session's settings at the collector: made once from what StartSession asked (checked, with the
// fleet's salt), stored with the session (SessionInfo.settings), and sent to each agent as stored,
// at the start and whenever the agent comes back.
//
// The salt is the fleet's, one for every session (data_dir/fleet.salt, or --fleet-salt): sampling
// decisions are then nested (bpf/ntprof_sampler.h), so an agent recording several sessions at once
// samples at the finest rate and each session keeps the subset its own rate picks. A session may
// still name its own salt; its agents then record it alone (docs/control-plane.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

struct Session;

absl::Status CheckSessionName(const std::string& name);

// The stored settings of a new session named `name`: `asked` checked (CheckRecordingSettings),
// session set, salt the fleet's unless one was asked for.
absl::StatusOr<v1::RecordingSettings> NewSessionSettings(const std::string& name,
                                                         const v1::RecordingSettings& asked,
                                                         uint64_t fleet_salt);

// What an agent of `role` records for the session: the stored settings, with the role and, for a
// session with a duration, the time it has left.
v1::RecordingSettings SettingsForAgent(const Session& session, v1::Role role, int64_t now_ns);

// The fleet's salt: `configured` when not 0 (then also written down), else the one data_dir holds,
// else a new random one written there.
absl::StatusOr<uint64_t> FleetSalt(const std::filesystem::path& data_dir, uint64_t configured);

}  // namespace ntprof::collector
