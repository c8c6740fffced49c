// Records from the network are untrusted: a record whose stamps cannot describe one command (a
// clock going backwards within a side, a span of hours, stamps beyond its role's list) is refused
// before it reaches a file or the join, and counted.
#pragma once

#include <optional>
#include <string>

#include "ntprof/v1/record.pb.h"

namespace ntprof::collector {

// nullopt when plausible, otherwise why not (for the counter's log line).
std::optional<std::string> ImpossibleRecord(const v1::Record& record);

}  // namespace ntprof::collector
