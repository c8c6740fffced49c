// Plain-text reports and comparisons in the layout storage engineers read (docs/usage.md).
#pragma once

#include <string>
#include <vector>

#include "report.h"

namespace ntprof {

struct TextOptions {
  bool detail = false;  // components under each stage
};

std::string RenderText(const Report& report, TextOptions options = {});
std::string RenderText(const Comparison& comparison);

// Pieces of the text that other renderers (the HTML page) print in the same words.
// "host + target, 100 sampled, 1 in 10, 1.0 s recorded; avg QD over ..."
std::string GroupContext(const GroupReport& g, const Report& report);
std::string ThroughputLine(const Throughput& t, RateSpan rates);
std::string LargestLine(const GroupReport& g);  // "" when no stage is largest
// "records: ...", then losses, skipped probe runs and notes, one per line.
std::vector<std::string> RecordLines(const Report& report);
// "slowest 5 of 1000 sampled commands (us; ...)"
std::string SlowestHeading(const Report& report);
// "grew most: storage, +40.00 us (1.67x)", "not compared: ...", ...
std::vector<std::string> VerdictLines(const GroupComparison& g);

}  // namespace ntprof
