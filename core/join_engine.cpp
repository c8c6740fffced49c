#include "join_engine.h"

#include <algorithm>

namespace ntprof {

bool SameCommand(const v1::Record& host, const v1::Record& target) {
  return host.opcode() == target.opcode() && host.nsid() == target.nsid() &&
         host.slba() == target.slba() && host.nlb() == target.nlb();
}

JoinEngine::JoinEngine(JoinOptions options, Sink sink)
    : options_(options), sink_(std::move(sink)) {}

JoinEngine::Key JoinEngine::KeyOf(const v1::Record& r) {
  auto [it, inserted] = nqn_ids_.try_emplace(r.subsys_nqn(), static_cast<uint32_t>(nqn_ids_.size()));
  return Key{{it->second, r.cntlid(), r.qid()}, r.cid()};
}

void JoinEngine::Add(v1::Record record, int64_t arrival_ns) {
  const bool is_host = record.role() == v1::ROLE_HOST;
  if (is_host) {
    ++stats_.host;
  } else {
    ++stats_.target;
  }
  Key key = KeyOf(record);
  pending_.push_back(Pending{std::move(record), arrival_ns, key, is_host});
  KeyQueues& queues = queues_[key];
  (is_host ? queues.host : queues.target).push_back(std::prev(pending_.end()));
  Match(key, &queues);
  while (pending_.size() > options_.max_pending) {
    if (!pending_.front().held) ++stats_.evicted_for_memory;
    Leave(pending_.begin());
  }
}

void JoinEngine::Match(Key key, KeyQueues* queues) {
  while (!queues->host.empty() && !queues->target.empty()) {
    auto host = queues->host.front();
    auto target = queues->target.front();
    const std::optional<OffsetBounds> bounds = OffsetBoundsOf(host->record, target->record);
    auto older = Older(host, target, bounds);
    if (!SameCommand(host->record, target->record)) {
      // One side lost this key's record (a drop on that machine): the older half has no partner.
      ++stats_.identity_mismatch;
      Leave(older);
      continue;
    }
    if (bounds && !SpanFits(*bounds)) {
      ++stats_.refused;
      Leave(older);
      continue;
    }
    // A stamp the timing needs is missing, or a user-space half makes the offset to the other
    // side inexact (pair_timing.h): the identity and the span are all there is.
    if (!bounds || !bounds->exact) {
      queues->host.pop_front();
      queues->target.pop_front();
      Emit(host, target);
      continue;
    }
    if (auto leaving = Judge(host, target, *bounds, queues); leaving != pending_.end()) {
      Leave(leaving);
    }
  }
  if (queues->host.empty() && queues->target.empty()) queues_.erase(key);
}

namespace {

// How many of `pairs` allow one offset together with `with`, newest first: chance makes one pair
// agree with another now and then (two commands of similar latency), all of several much less.
size_t Agreeing(const std::vector<OffsetBounds>& pairs, const OffsetBounds& with) {
  OffsetBounds common = with;
  size_t n = 0;
  for (auto p = pairs.rbegin(); p != pairs.rend(); ++p) {
    if (Place(common, *p) != Placement::kAgrees) continue;
    common = Intersection(common, *p);
    ++n;
  }
  return n;
}

}  // namespace

JoinEngine::PendingList::iterator JoinEngine::Older(PendingList::iterator host,
                                                    PendingList::iterator target,
                                                    const std::optional<OffsetBounds>& bounds) {
  // The queue's clocks say which half lies earlier; arrival (each machine's approximate wall
  // clock) only when they cannot.
  if (bounds) {
    auto clock = clocks_.find(host->key.queue);
    if (clock != clocks_.end() && clock->second.last) {
      switch (Place(*clock->second.last, *bounds)) {
        case Placement::kTargetLater: return host;
        case Placement::kTargetEarlier: return target;
        case Placement::kAgrees: break;
      }
    }
  }
  return host->arrival_ns <= target->arrival_ns ? host : target;
}

JoinEngine::QueueClock& JoinEngine::ClockOf(const Key& key) {
  return clocks_[key.queue];
}

JoinEngine::PendingList::iterator JoinEngine::Judge(PendingList::iterator host,
                                                    PendingList::iterator target,
                                                    const OffsetBounds& bounds, KeyQueues* queues) {
  QueueClock& clock = ClockOf(host->key);
  if (!clock.last) {
    std::vector<OffsetBounds> held;
    for (const HeldPair& h : clock.held) held.push_back(h.bounds);
    if (Agreeing(held, bounds) + 1 < kConfirmingPairs) {
      if (clock.held.size() == kMaxHeldPairs) {
        // The oldest of many that do not agree: the one formed at the edge.
        const HeldPair oldest = clock.held.front();
        clock.held.erase(clock.held.begin());
        ++stats_.refused;
        EmitLeftover(oldest.host);
        EmitLeftover(oldest.target);
      }
      Hold(&clock, host, target, bounds, queues);
      return pending_.end();
    }
    Settle(&clock, bounds);
  } else if (Place(*clock.last, bounds) != Placement::kAgrees &&
             Agreeing(clock.refused, bounds) + 1 < kConfirmingPairs) {
    ++stats_.refused;
    if (clock.refused.size() == kMaxHeldPairs) clock.refused.erase(clock.refused.begin());
    clock.refused.push_back(bounds);
    return Older(host, target, bounds);
  }
  queues->host.pop_front();
  queues->target.pop_front();
  Emit(host, target);
  clock.last = bounds;
  clock.refused.clear();
  return pending_.end();
}

void JoinEngine::Emit(PendingList::iterator host, PendingList::iterator target) {
  ++stats_.matched;
  sink_(&host->record, &target->record);
  pending_.erase(host);
  pending_.erase(target);
}

void JoinEngine::Hold(QueueClock* clock, PendingList::iterator host, PendingList::iterator target,
                      const OffsetBounds& bounds, KeyQueues* queues) {
  queues->host.pop_front();
  queues->target.pop_front();
  host->held = target->held = true;
  clock->held.push_back(HeldPair{host, target, bounds});
}

void JoinEngine::Settle(QueueClock* clock, const OffsetBounds& with) {
  std::vector<HeldPair> held;
  held.swap(clock->held);
  for (const HeldPair& h : held) {
    if (Place(h.bounds, with) == Placement::kAgrees) {
      Emit(h.host, h.target);
    } else {
      ++stats_.refused;
      EmitLeftover(h.host);
      EmitLeftover(h.target);
    }
  }
  clock->last = with;
}

void JoinEngine::Leave(PendingList::iterator it) {
  if (it->held) {
    // The window or the input ended before enough pairs agreed: the edge is at the start, so
    // the latest pair is the one to trust.
    QueueClock& clock = ClockOf(it->key);
    Settle(&clock, clock.held.back().bounds);
    return;
  }
  auto q = queues_.find(it->key);
  if (q != queues_.end()) {
    auto& side = it->is_host ? q->second.host : q->second.target;
    for (auto s = side.begin(); s != side.end(); ++s) {
      if (*s == it) {
        side.erase(s);
        break;
      }
    }
    if (q->second.host.empty() && q->second.target.empty()) queues_.erase(q);
  }
  EmitLeftover(it);
}

void JoinEngine::EmitLeftover(PendingList::iterator it) {
  if (it->is_host) {
    ++stats_.host_only;
    sink_(&it->record, nullptr);
  } else {
    ++stats_.target_only;
    sink_(nullptr, &it->record);
  }
  pending_.erase(it);
}

void JoinEngine::Expire(int64_t now_ns) {
  while (!pending_.empty() && pending_.front().arrival_ns < now_ns - options_.window_ns) {
    Leave(pending_.begin());
  }
}

void JoinEngine::Flush() {
  while (!pending_.empty()) Leave(pending_.begin());
}

}  // namespace ntprof
