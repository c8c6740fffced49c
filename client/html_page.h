// The --html FILE flag of report and compare: the page goes to FILE ("-": stdout) instead of the
// text or JSON on stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ntprof::cli {

CLI::Option* AddHtmlFlag(CLI::App* cmd, std::string* path);

// Writes the page; on failure prints "ntprofctl VERB: cannot write FILE: why" and returns kFailed.
int WriteHtmlPage(const std::string& verb, const std::string& path, const std::string& page);

// A collector older than OUTPUT_HTML answers text: true when `answer` is a page.
bool IsHtmlPage(const std::string& answer);

// Says what to do when the collector answered text instead of a page.
int OldCollectorAnswer(const std::string& verb);

}  // namespace ntprof::cli
