// Arithmetic on LossCounters, field by field. Every field is a uint64 count of one cause, so the
// helpers walk the message's fields: a cause added to record.proto needs no code here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

// Calls f(cause, count) for every cause, in the order of record.proto.
void ForEachLoss(const v1::LossCounters& losses,
                 const std::function<void(const std::string& cause, uint64_t count)>& f);
// Whether a cause counts sampled records the agent dropped. nested_probe_miss does not: it is the
// kernel's count of BPF program runs it skipped (recursion_misses), on any command, sampled or not.
bool IsLostRecordCause(const std::string& cause);
// to += from
void AddLosses(const v1::LossCounters& from, v1::LossCounters* to);
// What grew from previous to current (cumulative counters; a counter that went back restarted).
v1::LossCounters LossDelta(const v1::LossCounters& previous, const v1::LossCounters& current);

}  // namespace ntprof
