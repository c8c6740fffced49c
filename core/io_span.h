// When commands ran: from the first command's earliest stamp to the last command's latest stamp.
// Stamps are each machine's own monotonic clock and two machines' clocks cannot be compared, so
// the span is kept per machine (Record.agent); the longest of them stands for all.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

class IoSpan {
 public:
  void Add(const v1::Record& record);

  // 0 before any command with a stamp.
  int64_t LongestNs() const;

 private:
  struct Range {
    uint64_t first = UINT64_MAX;
    uint64_t last = 0;
  };
  std::map<std::string, Range> by_machine_;
};

}  // namespace ntprof
