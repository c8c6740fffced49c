#include "loss_counters.h"

namespace ntprof {
namespace {

// Applies combine(a, b) to each field of a and b, writing into out.
void Combine(const v1::LossCounters& a, const v1::LossCounters& b, v1::LossCounters* out,
             const std::function<uint64_t(uint64_t, uint64_t)>& combine) {
  const auto* descriptor = v1::LossCounters::descriptor();
  const auto* reflection = v1::LossCounters::GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const auto* field = descriptor->field(i);
    reflection->SetUInt64(out, field,
                          combine(reflection->GetUInt64(a, field), reflection->GetUInt64(b, field)));
  }
}

}  // namespace

void ForEachLoss(const v1::LossCounters& losses,
                 const std::function<void(const std::string& cause, uint64_t count)>& f) {
  const auto* descriptor = v1::LossCounters::descriptor();
  const auto* reflection = v1::LossCounters::GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const auto* field = descriptor->field(i);
    f(field->name(), reflection->GetUInt64(losses, field));
  }
}

bool IsLostRecordCause(const std::string& cause) {
  return cause != "nested_probe_miss" && cause != "socket_table_full";
}

void AddLosses(const v1::LossCounters& from, v1::LossCounters* to) {
  Combine(*to, from, to, [](uint64_t a, uint64_t b) { return a + b; });
}

v1::LossCounters LossDelta(const v1::LossCounters& previous, const v1::LossCounters& current) {
  v1::LossCounters delta;
  Combine(previous, current, &delta,
          [](uint64_t prev, uint64_t cur) { return cur >= prev ? cur - prev : cur; });
  return delta;
}

}  // namespace ntprof
