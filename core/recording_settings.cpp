#include "recording_settings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ntprof_sampler.h"

namespace ntprof {

absl::Status CheckRecordingSettings(const v1::RecordingSettings& settings) {
  if (settings.sample_rate() == 0) {
    return absl::InvalidArgumentError(
        "the sample rate must be at least 1 (--sample-rate N: one command in N; 1 = every one)");
  }
  return absl::OkStatus();
}

bool SessionNames(const v1::RecordingSettings& settings, const std::string& subsys_nqn,
                  const std::string& device) {
  auto listed = [](const auto& list, const std::string& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  return listed(settings.subsystems(), subsys_nqn) && listed(settings.devices(), device);
}

bool SessionSamples(const v1::RecordingSettings& settings, uint8_t opcode, uint32_t nsid,
                    uint64_t slba, uint32_t nlb, uint16_t cid) {
  return ntprof_sampled(opcode, nsid, slba, nlb, cid, settings.salt(), settings.sample_rate()) !=
         0;
}

bool SessionKeeps(const v1::RecordingSettings& settings, const v1::Record& record) {
  return SessionNames(settings, record.subsys_nqn(), record.device()) &&
         SessionSamples(settings, static_cast<uint8_t>(record.opcode()), record.nsid(),
                        record.slba(), record.nlb(), static_cast<uint16_t>(record.cid()));
}

}  // namespace ntprof
