#include "ntprofctl_app.h"

#include "collector_target.h"
#include "compare_command.h"
#include "export_command.h"
#include "probe_command.h"
#include "report_command.h"
#include "run_command.h"
#include "session_commands.h"
#include "watch_command.h"

namespace ntprof::cli {

void DefineNtprofctl(CLI::App& app, int* exit_code) {
  app.description("ntprofctl - where did the time of each NVMe-oF command go");
  app.footer(R"HELP(
Offline (no server needed):
  ntprofctl report FILE.ntp...      stage report of host and/or target recordings
  ntprofctl compare BASE NEW        two runs side by side
  ntprofctl compare BASE NEW --fail-if 'storage.p99 > +10%'
                                    ... and exit 1 when NEW regressed beyond the bound

With a collector (ntprof-collector; address from --collector, $NTPROF_COLLECTOR,
~/.config/ntprof/ntprofctl.conf or /etc/ntprof/ntprofctl.conf, else the packaged collector's socket
when it exists, else localhost:7420; --collector and the TLS flags go before or after the verb):
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
  AddGlobalCollectorFlags(app);
  AddReportCommand(app, exit_code);
  AddCompareCommand(app, exit_code);
  AddSessionCommands(app, exit_code);
  AddWatchCommand(app, exit_code);
  AddExportCommand(app, exit_code);
  AddProbeCommand(app, exit_code);
  AddRunCommand(app, exit_code);
}

}  // namespace ntprof::cli
