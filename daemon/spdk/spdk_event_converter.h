// One `ntprof` USDT probe firing (struct ntprof_spdk_event, the application's clock at its rate)
// -> the common record (struct ntprof_record, CLOCK_MONOTONIC nanoseconds, stack SPDK).
//
// Placing the stamps in time: the application stamped with its own clock (e.g. the TSC through
// spdk_get_ticks()) and also read it when the probe fired (done_ticks); the BPF program read
// CLOCK_MONOTONIC at the same probe. A stamp s becomes probe_mono_ns - (done_ticks - s) / rate.
// Differences of stamps, which is all the stage model uses, only depend on the rate; the offset
// error (the time between the application's clock read and the BPF program, ~1 us) shifts every
// stamp of a command alike.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ntprof_record.h"
#include "ntprof_spdk_event.h"
#include "record_converter.h"

namespace ntprof::agent::spdk {

// ticks at hz -> nanoseconds, without overflow for any 64-bit tick count.
uint64_t TicksToNs(uint64_t ticks, uint64_t hz);

// Fails (with the reason) for an event whose stamp area was unreadable or carries no clock rate.
absl::StatusOr<ntprof_record> ConvertSpdkEvent(const ntprof_spdk_event& e);

// The join identity (subsystem NQN and cntlid come with the probe) and a device name for reports:
// "<process name>:nN" (SPDK names no block device).
RecordIdentity SpdkIdentity(const ntprof_spdk_event& e, const std::string& process_name);

// True when a read or write lacks a stage boundary the guide defines (target T0-T5, host H1-H4).
bool SpdkRecordMissesStamp(const ntprof_record& rec);

}  // namespace ntprof::agent::spdk
