// ntprofctl: the command-line client. Thin: reports and comparisons come from ntprof_core.
#include <CLI/CLI.hpp>

#include "cli_parse.h"
#include "exit_codes.h"
#include "ntprofctl_app.h"

int main(int argc, char** argv) {
  CLI::App app;
  int exit_code = ntprof::cli::kOk;
  ntprof::cli::DefineNtprofctl(app, &exit_code);
  return ntprof::cli::ParseAndRun(app, argc, argv, "ntprofctl", exit_code, ntprof::cli::kBadInput);
}
