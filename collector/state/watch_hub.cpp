#include "watch_hub.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "stage_model.h"

namespace ntprof::collector {
namespace {

bool Listed(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<std::string> ToVector(const google::protobuf::RepeatedPtrField<std::string>& field) {
  return {field.begin(), field.end()};
}

}  // namespace

WatchFilter WatchFilter::From(const v1::WatchRequest& request) {
  WatchFilter f;
  f.session = request.session();
  f.subsystems = ToVector(request.subsystems());
  f.hosts = ToVector(request.hosts());
  f.targets = ToVector(request.targets());
  f.groups = ToVector(request.groups());
  f.interval_ns = (request.interval_s() == 0 ? 1 : request.interval_s()) * 1'000'000'000ll;
  return f;
}

bool WatchFilter::Keeps(const std::string& s, const v1::Record* host,
                        const v1::Record* target) const {
  if (!session.empty() && s != session) return false;
  const v1::Record& identity = host ? *host : *target;
  if (!Listed(subsystems, identity.subsys_nqn())) return false;
  // A filter on hosts keeps only commands whose host half was seen from a listed host.
  if (!hosts.empty() && (!host || !Listed(hosts, host->agent()))) return false;
  if (!targets.empty() && (!target || !Listed(targets, target->agent()))) return false;
  return true;
}

bool WatchFilter::KeepsGroup(const std::string& name) const {
  if (groups.empty()) return true;
  return std::any_of(groups.begin(), groups.end(),
                     [&](const std::string& g) { return absl::StartsWith(name, g); });
}

std::optional<v1::WatchUpdate> WatchSubscription::Next() {
  auto update = queue_.Pop();
  if (update) update->set_dropped_updates(queue_.dropped());
  return update;
}

std::shared_ptr<WatchSubscription> WatchHub::Subscribe(WatchFilter filter,
                                                       std::function<void()> notify,
                                                       int64_t now_ns) {
  auto s =
      std::make_shared<WatchSubscription>(std::move(filter), queue_capacity_, std::move(notify));
  s->interval_start_ns_ = now_ns;
  std::lock_guard lock(mu_);
  subscriptions_.push_back(s);
  return s;
}

void WatchHub::Unsubscribe(const std::shared_ptr<WatchSubscription>& subscription) {
  std::lock_guard lock(mu_);
  std::erase(subscriptions_, subscription);
}

size_t WatchHub::clients() const {
  std::lock_guard lock(mu_);
  return subscriptions_.size();
}

void WatchHub::Dispatch(const std::string& session, uint32_t sample_rate, const v1::Record* host,
                        const v1::Record* target) {
  std::lock_guard lock(mu_);
  for (auto& s : subscriptions_) {
    if (s->ended_ || !s->filter_.Keeps(session, host, target)) continue;
    s->summaries_.try_emplace(session, sample_rate).first->second.Add(host, target);
  }
}

void WatchHub::DispatchCounters(const std::string& session, uint32_t sample_rate,
                                const std::string& agent, const v1::DeviceCounters& counters) {
  std::lock_guard lock(mu_);
  for (auto& s : subscriptions_) {
    const WatchFilter& f = s->filter_;
    if (s->ended_ || (!f.session.empty() && f.session != session)) continue;
    if (!Listed(f.hosts, agent)) continue;  // counters come from hosts
    s->summaries_.try_emplace(session, sample_rate).first->second.AddCounters(counters);
  }
}

v1::WatchUpdate WatchHub::Summarize(WatchSubscription* s, int64_t now_ns) {
  v1::WatchUpdate update;
  const int64_t span_ns = now_ns - s->interval_start_ns_;
  update.set_interval_end_wall_ns(static_cast<uint64_t>(now_ns));
  update.set_interval_s(static_cast<double>(span_ns) / 1e9);
  for (auto& [session, summary] : s->summaries_) {
    const Report interval = summary.Take(span_ns);
    const std::vector<std::string> lines = IntervalSummary::Lines(interval);
    for (size_t i = 0; i < interval.groups.size(); ++i) {
      const GroupReport& g = interval.groups[i];
      if (!s->filter_.KeepsGroup(g.name)) continue;
      v1::WatchGroup* out = update.add_groups();
      out->set_session(session);
      out->set_name(g.name);
      out->set_scope(std::string(ScopeId(g.scope)));
      out->set_sampled(g.latency.n);
      out->set_rate_per_s(interval.span_s > 0 ? g.latency.n / interval.span_s : 0);
      out->set_iops(g.throughput ? g.throughput->iops : 0);
      out->set_mean_ns(g.latency.mean_ns);
      out->set_p99_ns(g.latency.p99_ns);
      for (const StageRow& row : g.stages) {
        v1::WatchStage* st = out->add_stages();
        st->set_stage(std::string(StageId(row.stage)));
        st->set_label(row.label);
        st->set_mean_ns(row.dist.mean_ns);
        st->set_share(row.share);
      }
      out->set_line(absl::StrCat(session, " ", lines[i]));
    }
  }
  s->interval_start_ns_ = now_ns;
  return update;
}

uint64_t WatchHub::Tick(int64_t now_ns) {
  std::lock_guard lock(mu_);
  uint64_t dropped = 0;
  for (auto& s : subscriptions_) {
    // Ticks come about once a second; a little early still counts as the interval's end.
    constexpr int64_t kTickSlack = 100'000'000;
    if (s->ended_ || now_ns - s->interval_start_ns_ < s->filter_.interval_ns - kTickSlack) continue;
    if (!s->queue_.Push(Summarize(s.get(), now_ns))) ++dropped;
    s->notify_();
  }
  return dropped;
}

uint64_t WatchHub::EndSession(const std::string& session, int64_t now_ns) {
  std::lock_guard lock(mu_);
  uint64_t dropped = 0;
  for (auto& s : subscriptions_) {
    if (s->ended_ || s->filter_.session != session) continue;
    if (!s->queue_.Push(Summarize(s.get(), now_ns))) ++dropped;
    s->ended_ = true;  // after the push: see WatchSubscription::ended
    s->notify_();
  }
  return dropped;
}

}  // namespace ntprof::collector
