// ntprofctl: the command-line client. Thin: reports and comparisons come from ntprof_core.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_parse.h"
#include "compare_command.h"
#include "exit_codes.h"
#include "export_command.h"
#include "probe_command.h"
#include "report_command.h"
#include "run_command.h"
#include "session_commands.h"
#include "watch_command.h"

int main(int argc, char** argv) {
  CLI::App app{"ntprofctl - where did the time of each NVMe-oF command go"};
  app.footer(R"HELP(
Offline (no server needed):
  ntprofctl report FILE.ntp...      stage report of host and/or target recordings
  ntprofctl compare BASE NEW        two runs side by side
  ntprofctl compare BASE NEW --fail-if 'storage.p99 > +10%'
                                    ... and exit 1 when NEW regressed beyond the bound

With a collector (ntprof-collector; address from --collector, $NTPROF_COLLECTOR,
~/.config/ntprof/ntprofctl.conf or /etc/ntprof/ntprofctl.conf, default localhost:7420):
  ntprofctl start NAME -s N         start a session on the connected agents
  ntprofctl watch [NAME]            live per-second summaries of the cluster
  ntprofctl stop NAME               stop it
  ntprofctl run NAME -- COMMAND     a session around COMMAND, then its report (CI labs;
                                    --baseline BASE --fail-if BOUND gates it)
  ntprofctl status                  agents and sessions
  ntprofctl report NAME             the session's stage report
  ntprofctl compare A B             sessions or recordings side by side
  ntprofctl export NAME -o DIR      the session's records as .ntp files
  ntprofctl probe [AGENT]           which hooks an agent can attach

Recordings come from `ntprofd record` on each host and target. Run `ntprofctl VERB --help` for a
verb's flags and examples.)HELP");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ntprofctl ") + NTPROF_VERSION);
  int exit_code = ntprof::cli::kOk;
  ntprof::cli::AddReportCommand(app, &exit_code);
  ntprof::cli::AddCompareCommand(app, &exit_code);
  ntprof::cli::AddSessionCommands(app, &exit_code);
  ntprof::cli::AddWatchCommand(app, &exit_code);
  ntprof::cli::AddExportCommand(app, &exit_code);
  ntprof::cli::AddProbeCommand(app, &exit_code);
  ntprof::cli::AddRunCommand(app, &exit_code);
  return ntprof::cli::ParseAndRun(app, argc, argv, "ntprofctl", exit_code, ntprof::cli::kBadInput);
}
