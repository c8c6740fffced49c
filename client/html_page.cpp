#include "html_page.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "exit_codes.h"

namespace ntprof::cli {

CLI::Option* AddHtmlFlag(CLI::App* cmd, std::string* path) {
  return cmd->add_option("--html", *path,
                         "Write one self-contained HTML page (charts, tables, notes; works "
                         "offline) to FILE instead of printing; - for stdout")
      ->type_name("FILE");
}

int WriteHtmlPage(const std::string& verb, const std::string& path, const std::string& page) {
  if (path == "-") {
    std::cout << page;
    return kOk;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << page;
  out.close();
  if (!out) {
    std::cerr << "ntprofctl " << verb << ": cannot write " << path << ": "
              << std::strerror(errno) << "\n";
    return kFailed;
  }
  return kOk;
}

bool IsHtmlPage(const std::string& answer) { return absl::StartsWith(answer, "<!DOCTYPE html>"); }

int OldCollectorAnswer(const std::string& verb) {
  std::cerr << "ntprofctl " << verb << ": the collector is older than this ntprofctl and cannot "
            << "render HTML; upgrade it, or `ntprofctl export NAME -o DIR` and run `ntprofctl "
            << verb << "` on DIR\n";
  return kFailed;
}

}  // namespace ntprof::cli
