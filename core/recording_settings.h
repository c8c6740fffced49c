// A session's settings (v1::RecordingSettings: rate, salt, filters, duration) in one message, from
// the command line to the collector's session.pb to the agent: what they mean and the one check of
// them, shared by ntprofctl, the collector and ntprofd.
#pragma once

#include "absl/status/status.h"
#include "ntprof/v1/agent.pb.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof {

// The one place a rate (and the rest) is checked: OK, or what to change.
absl::Status CheckRecordingSettings(const v1::RecordingSettings& settings);

// Whether a recorded command is one the session keeps: its rate (the nested sampling of
// bpf/ntprof_sampler.h, with the settings' salt) and its filters (subsystems, devices). A record
// sampled at a finer rate than the session's is kept only when the session's rate samples it too.
bool SessionKeeps(const v1::RecordingSettings& settings, const v1::Record& record);
// Its two parts. The filters: the session's subsystems and devices list these (or are empty).
bool SessionNames(const v1::RecordingSettings& settings, const std::string& subsys_nqn,
                  const std::string& device);
// The rate: the session's (rate, salt) samples the command with these SQE fields.
bool SessionSamples(const v1::RecordingSettings& settings, uint8_t opcode, uint32_t nsid,
                    uint64_t slba, uint32_t nlb, uint16_t cid);

}  // namespace ntprof
