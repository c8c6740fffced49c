#include "live_join.h"

namespace ntprof::collector {

LiveJoin::LiveJoin(bool join_sides, JoinOptions options, JoinEngine::Sink sink)
    : join_sides_(join_sides), sink_(sink), engine_(options, std::move(sink)) {}

void LiveJoin::Add(v1::Record record, int64_t now_ns) {
  // A local block device's command has no target side: waiting a window for one would only
  // delay it and then call it a leftover.
  if (join_sides_ && record.transport() != v1::TRANSPORT_LOCAL) {
    engine_.Add(std::move(record), now_ns);
    return;
  }
  const bool host = record.role() == v1::ROLE_HOST;
  sink_(host ? &record : nullptr, host ? nullptr : &record);
}

void LiveJoin::Expire(int64_t now_ns) {
  if (join_sides_) engine_.Expire(now_ns);
}

void LiveJoin::Flush() {
  if (join_sides_) engine_.Flush();
}

}  // namespace ntprof::collector
