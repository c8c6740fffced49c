#include "slowest_commands.h"

#include <algorithm>
#include <ctime>

#include "absl/strings/str_format.h"

namespace ntprof {

// Heap order: the fastest, and of equally fast the latest offered, on top.
bool SlowestCommands::Before(const Entry& a, const Entry& b) {
  if (a.command.latency_ns != b.command.latency_ns) {
    return a.command.latency_ns < b.command.latency_ns;
  }
  return a.order > b.order;
}

bool SlowestCommands::WouldKeep(int64_t latency_ns) const {
  if (n_ == 0) return false;
  return heap_.size() < n_ || latency_ns > heap_.front().command.latency_ns;
}

void SlowestCommands::Offer(SlowCommand command) {
  if (!WouldKeep(command.latency_ns)) {
    ++offered_;
    return;
  }
  // std heaps keep the largest on top: "largest" here is the entry to push out first.
  auto top_first = [](const Entry& a, const Entry& b) { return Before(b, a); };
  if (heap_.size() == n_) {
    std::pop_heap(heap_.begin(), heap_.end(), top_first);
    heap_.pop_back();
  }
  heap_.push_back(Entry{std::move(command), offered_++});
  std::push_heap(heap_.begin(), heap_.end(), top_first);
}

std::vector<SlowCommand> SlowestCommands::Sorted() const {
  std::vector<Entry> entries = heap_;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.command.latency_ns != b.command.latency_ns) {
      return a.command.latency_ns > b.command.latency_ns;
    }
    return a.order < b.order;
  });
  std::vector<SlowCommand> out;
  out.reserve(entries.size());
  for (Entry& e : entries) out.push_back(std::move(e.command));
  return out;
}

std::vector<Stage> SlowestColumns(const Report& report) {
  std::vector<Stage> columns;
  for (size_t s = 0; s < kStageCount; ++s) {
    const auto stage = static_cast<Stage>(s);
    if (stage == Stage::kEndToEnd || stage == Stage::kTargetTotal) continue;
    for (const SlowCommand& c : report.slowest) {
      if (c.stages[s]) {
        columns.push_back(stage);
        break;
      }
    }
  }
  return columns;
}

Stage SlowestTotal(const Report& report) {
  return report.groups.empty() ? Stage::kEndToEnd : StagesOf(report.groups.front().scope).back();
}

std::string WallTimeText(int64_t wall_ns) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return absl::StrFormat("%04d-%02d-%02d %02d:%02d:%02d.%06d", utc.tm_year + 1900, utc.tm_mon + 1,
                         utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                         static_cast<int>(wall_ns % 1'000'000'000 / 1000));
}

}  // namespace ntprof
