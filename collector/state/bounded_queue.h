// A queue that never blocks its producer: when full, the oldest item is dropped and counted
// (Tetragon's per-client queue). One per watch client, so a slow reader only loses its own updates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace ntprof::collector {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Returns false when an older item had to be dropped to make room.
  bool Push(T item) {
    std::lock_guard lock(mu_);
    bool kept_all = true;
    if (items_.size() >= capacity_) {
      items_.pop_front();
      ++dropped_;
      kept_all = false;
    }
    items_.push_back(std::move(item));
    return kept_all;
  }

  std::optional<T> Pop() {
    std::lock_guard lock(mu_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  uint64_t dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<T> items_;
  uint64_t dropped_ = 0;
};

}  // namespace ntprof::collector
