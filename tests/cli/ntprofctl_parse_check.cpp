// ntprofctl_parse_check: parses command lines with ntprofctl's own definitions (DefineNtprofctl)
// without running them: no collector, file or network is needed, and only a usage error counts.
// Reads one JSON object a line on stdin, {"where": "docs/x.md:12", "argv": ["ntprofctl", ...]};
// prints each line the parser refuses, with where it came from and why, then a count. Exit
// status: 0 when every line parsed, 1 otherwise.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "ntprofctl_app.h"

namespace {

// The program with every check of a parse (values, validators, extras) but no verb run: CLI11
// calls pre_callback() once parsing is complete, before any verb's callback.
class ParseOnlyApp : public CLI::App {
 public:
  struct Parsed {};
  void pre_callback() override { throw Parsed{}; }
};

// "" when argv parses; else the parser's message.
std::string UsageError(const std::vector<std::string>& args) {
  ParseOnlyApp app;
  int exit_code = ntprof::cli::kOk;
  ntprof::cli::DefineNtprofctl(app, &exit_code);
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const ParseOnlyApp::Parsed&) {
  } catch (const CLI::Success&) {  // --help, --version
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main() {
  int parsed = 0, refused = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    const nlohmann::json command = nlohmann::json::parse(line);
    const std::vector<std::string> args = command.at("argv");
    if (const std::string error = UsageError(args); error.empty()) {
      ++parsed;
    } else {
      ++refused;
      std::string shown;
      for (const std::string& arg : args) shown += (shown.empty() ? "" : " ") + arg;
      std::cout << "REFUSED " << command.at("where").get<std::string>() << ": " << shown << "\n"
                << "        " << error << "\n";
    }
  }
  std::cout << parsed << " command lines parsed, " << refused << " refused\n";
  return refused == 0 ? 0 : 1;
}
