// The regression gate's result as a Markdown summary for a CI job's page (GitHub's
// $GITHUB_STEP_SUMMARY, GitLab's and Gitea's comments): a verdict line and one table row per check.
#pragma once

#include <string>

#include "regression_gate.h"

namespace ntprof {

// base_title / new_title: what was compared (file lists, session names).
std::string ToMarkdown(const GateResult& result, const std::string& base_title,
                       const std::string& new_title);

}  // namespace ntprof
