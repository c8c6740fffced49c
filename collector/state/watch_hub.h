// Live interval summaries for watch clients. Each client has its own filter, its own summaries
// (one IntervalSummary per session, fed only the commands its filter keeps) and its own bounded
// queue of updates: a client that reads slowly loses its oldest updates, counted and shown to it,
// and never slows ingestion.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bounded_queue.h"
#include "interval_summary.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

struct WatchFilter {
  std::string session;  // "" = all
  std::vector<std::string> subsystems, hosts, targets, groups;
  int64_t interval_ns = 1'000'000'000;

  static WatchFilter From(const v1::WatchRequest& request);
  bool Keeps(const std::string& session, const v1::Record* host, const v1::Record* target) const;
  bool KeepsGroup(const std::string& group_name) const;
};

class WatchSubscription {
 public:
  WatchSubscription(WatchFilter filter, size_t queue_capacity, std::function<void()> notify)
      : filter_(std::move(filter)), queue_(queue_capacity), notify_(std::move(notify)) {}

  // The next update to send, with the client's drop count filled in.
  std::optional<v1::WatchUpdate> Next();
  uint64_t dropped() const { return queue_.dropped(); }
  // The watched session ended: its last (partial) interval is queued, nothing follows. Ask before
  // Next(): once this is true, a Next() that finds nothing means everything was taken.
  bool ended() const { return ended_; }

 private:
  friend class WatchHub;
  WatchFilter filter_;
  BoundedQueue<v1::WatchUpdate> queue_;
  std::function<void()> notify_;  // called (under the hub's lock) when an update is queued
  std::map<std::string, IntervalSummary> summaries_;  // per session
  int64_t interval_start_ns_ = 0;
  std::atomic<bool> ended_ = false;
};

class WatchHub {
 public:
  explicit WatchHub(size_t queue_capacity = 64) : queue_capacity_(queue_capacity) {}

  std::shared_ptr<WatchSubscription> Subscribe(WatchFilter filter, std::function<void()> notify,
                                               int64_t now_ns);
  // After it returns, the subscription's notify is never called again.
  void Unsubscribe(const std::shared_ptr<WatchSubscription>& subscription);

  void Dispatch(const std::string& session, uint32_t sample_rate, const v1::Record* host,
                const v1::Record* target);
  void DispatchCounters(const std::string& session, uint32_t sample_rate, const std::string& agent,
                        const v1::DeviceCounters& counters);
  // Queues an update for every client whose interval ended; returns updates dropped meanwhile.
  uint64_t Tick(int64_t now_ns);
  // Session `session` stopped: every client watching it alone gets its last interval (up to now)
  // and is told the watch is over (WatchSubscription::ended). Returns updates dropped meanwhile.
  uint64_t EndSession(const std::string& session, int64_t now_ns);

  size_t clients() const;

 private:
  v1::WatchUpdate Summarize(WatchSubscription* s, int64_t now_ns);

  const size_t queue_capacity_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<WatchSubscription>> subscriptions_;
};

}  // namespace ntprof::collector
