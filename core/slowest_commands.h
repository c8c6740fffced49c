// The N slowest sampled commands of a report, kept in a heap of N while records stream by, so a
// p99.9 can be traced to the commands behind it whatever the recording's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report.h"

namespace ntprof {

class SlowestCommands {
 public:
  explicit SlowestCommands(size_t n) : n_(n) {}

  // Of two equally slow commands the one offered first stays.
  void Offer(SlowCommand command);

  // The slowest first; ties in the order they were offered.
  std::vector<SlowCommand> Sorted() const;

  size_t capacity() const { return n_; }
  // Whether a command of this latency would be kept: callers skip building the rest of it if not.
  bool WouldKeep(int64_t latency_ns) const;

 private:
  struct Entry {
    SlowCommand command;
    uint64_t order;
  };
  // The heap's top is the entry the next faster-than-all-kept command would push out.
  static bool Before(const Entry& a, const Entry& b);

  size_t n_;
  uint64_t offered_ = 0;
  std::vector<Entry> heap_;
};

// The stages any of the report's slowest commands has, in the model's order, totals left out: the
// columns of the slowest-commands table.
std::vector<Stage> SlowestColumns(const Report& report);

// What the slowest commands are ranked by: end to end, or in target for a target recorded alone.
Stage SlowestTotal(const Report& report);

// "2023-11-14 22:13:20.123456" (UTC, microseconds): a slow command's start.
std::string WallTimeText(int64_t wall_ns);

}  // namespace ntprof
