// RecordFeed: one Agent.Record caller's copy of a recording (header, batches, trailer). Bounded: a
// caller that reads too slowly loses batches (counted, and said in its stream's end status), never
// slowing the recording or the spool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "ntprof/v1/agent.pb.h"

namespace ntprof::agent {

class RecordFeed {
 public:
  static constexpr size_t kMaxQueued = 256;

  void Push(v1::RecordStreamMessage message) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    if (message.has_batch() && queue_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    if (message.has_trailer()) closed_ = true;
    queue_.push_back(std::move(message));
    cv_.notify_all();
  }
  // The recording ended without a trailer (it failed): the stream ends after what is queued.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // The next message; nullopt when the feed is closed and drained, or nothing came in timeout
  // (*ended tells which).
  std::optional<v1::RecordStreamMessage> Next(std::chrono::milliseconds timeout, bool* ended) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_; });
    *ended = queue_.empty() && closed_;
    if (queue_.empty()) return std::nullopt;
    v1::RecordStreamMessage m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }
  uint64_t dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::RecordStreamMessage> queue_;
  bool closed_ = false;
  uint64_t dropped_ = 0;
};

}  // namespace ntprof::agent
