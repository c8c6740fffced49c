// Unmatched halves at a joined recording's edges, told apart from real losses. One side often
// starts recording a little later or stops a little earlier than the other: the host halves of the
// commands before the target recorded (or after it stopped) have no partner, and that is no loss.
// Clocks of two machines cannot be compared, so each half is placed on its own agent's clock: a
// leftover earlier than that agent's first matched command, or later than its last, lies at an
// edge; one between matched commands is a real loss.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

class SessionEdges {
 public:
  void AddMatched(const v1::Record& host, const v1::Record& target);
  void AddLeftover(const v1::Record& half);

  struct AtEdges {
    uint64_t host = 0;
    uint64_t target = 0;
  };
  AtEdges Count() const;

 private:
  struct Range {
    uint64_t first = UINT64_MAX;
    uint64_t last = 0;
  };
  void Extend(const v1::Record& half);
  // Per agent and role: one clock (a name alone could be missing, and then mix two machines).
  using Clock = std::pair<std::string, bool>;
  std::map<Clock, Range> matched_;
  struct Leftover {
    Clock clock;
    uint64_t when;
  };
  std::vector<Leftover> leftovers_;
};

}  // namespace ntprof
