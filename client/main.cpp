// ntprofctl: the command-line client. Thin: reports and comparisons come from ntprof_core.
#include <CLI/CLI.hpp>
#include <iostream>

#include "compare_command.h"
#include "exit_codes.h"
#include "report_command.h"

int main(int argc, char** argv) {
  CLI::App app{"ntprofctl - where did the time of each NVMe-oF command go"};
  app.footer(R"HELP(
Offline (no server needed):
  ntprofctl report FILE.ntp...      stage report of host and/or target recordings
  ntprofctl compare BASE NEW        two runs side by side

Recordings come from `ntprofd record` on each host and target. Run `ntprofctl VERB --help` for a
verb's flags and examples.)HELP");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ntprofctl ") + NTPROF_VERSION);
  int exit_code = ntprof::cli::kOk;
  ntprof::cli::AddReportCommand(app, &exit_code);
  ntprof::cli::AddCompareCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage of the verb that was being parsed (or of ntprofctl), then what was wrong.
    const auto parsed = app.get_subcommands();
    std::cerr << (parsed.empty() ? app.help() : parsed.back()->help());
    std::cerr << "ntprofctl: " << e.what() << "\n";
    return ntprof::cli::kBadInput;
  }
  return exit_code;
}
