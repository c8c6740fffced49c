// The regression gate's result in plain text (after a comparison, in CI logs), and the phrases the
// other renderers (JUnit, Markdown) print in the same words.
#pragma once

#include <string>

#include "regression_gate.h"

namespace ntprof {

std::string RenderText(const GateResult& result);

// "storage p99", "drive mean"
std::string SubjectOf(const BoundCheck& check);
// "70.00 us"
std::string Microseconds(double ns);
// "+15.0 %" or "+1.23 us": a change as its bound measures it.
std::string ChangeText(const BoundCheck& check, double change);
// "+15.0 % [+12.1 %, +17.9 %]"
std::string ChangeWithInterval(const BoundCheck& check);
// "read 4KiB nvme0n1: storage p99 70.00 -> 80.50 us, +15.0 % [+12.1 %, +17.9 %]: whole interval
// above +10%" (or the reason it was undecided).
std::string CheckLine(const BoundCheck& check);
// "crossed", "within", "undecided"
std::string VerdictName(BoundCheck::Verdict verdict);
// "95 %"
std::string ConfidenceText(double confidence);

}  // namespace ntprof
