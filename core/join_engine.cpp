#include "join_engine.h"

namespace ntprof {

bool SameCommand(const v1::Record& host, const v1::Record& target) {
  return host.opcode() == target.opcode() && host.nsid() == target.nsid() &&
         host.slba() == target.slba() && host.nlb() == target.nlb();
}

JoinEngine::JoinEngine(JoinOptions options, Sink sink)
    : options_(options), sink_(std::move(sink)) {}

JoinEngine::Key JoinEngine::KeyOf(const v1::Record& r) {
  auto [it, inserted] = nqn_ids_.try_emplace(r.subsys_nqn(), static_cast<uint32_t>(nqn_ids_.size()));
  return Key{it->second, r.cntlid(), r.qid(), r.cid()};
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
    ++stats_.evicted_for_memory;
    Leave(pending_.begin());
  }
}

void JoinEngine::Match(Key key, KeyQueues* queues) {
  while (!queues->host.empty() && !queues->target.empty()) {
    auto host = queues->host.front();
    auto target = queues->target.front();
    if (!SameCommand(host->record, target->record)) {
      // One side lost this key's record (a drop on that machine): the older half has no partner.
      ++stats_.identity_mismatch;
      Leave(host->arrival_ns <= target->arrival_ns ? host : target);
      continue;
    }
    queues->host.pop_front();
    queues->target.pop_front();
    ++stats_.matched;
    sink_(&host->record, &target->record);
    pending_.erase(host);
    pending_.erase(target);
  }
  if (queues->host.empty() && queues->target.empty()) queues_.erase(key);
}

void JoinEngine::Leave(PendingList::iterator it) {
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
