#include "session_edges.h"

#include <algorithm>

namespace ntprof {
namespace {

// When the command was first seen on its agent's clock: its earliest stamp.
uint64_t When(const v1::Record& r) {
  uint64_t first = UINT64_MAX;
  for (uint64_t s : r.stamps()) {
    if (s) first = std::min(first, s);
  }
  return first;
}

}  // namespace

void SessionEdges::Extend(const v1::Record& half) {
  const uint64_t when = When(half);
  if (when == UINT64_MAX) return;
  Range& r = matched_[{half.agent(), half.role() == v1::ROLE_HOST}];
  r.first = std::min(r.first, when);
  r.last = std::max(r.last, when);
}

void SessionEdges::AddMatched(const v1::Record& host, const v1::Record& target) {
  Extend(host);
  Extend(target);
}

void SessionEdges::AddLeftover(const v1::Record& half) {
  leftovers_.push_back({{half.agent(), half.role() == v1::ROLE_HOST}, When(half)});
}

SessionEdges::AtEdges SessionEdges::Count() const {
  AtEdges out;
  for (const Leftover& l : leftovers_) {
    auto r = matched_.find(l.clock);
    // An agent with nothing matched gives no range: its leftovers cannot be placed.
    if (r == matched_.end() || l.when == UINT64_MAX) continue;
    if (l.when < r->second.first || l.when > r->second.last) ++(l.clock.second ? out.host : out.target);
  }
  return out;
}

}  // namespace ntprof
