// ntprofd: the per-machine agent. The work is in the ntprof_agent library (engine, hook plan,
// recorder); this file only parses the command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/probe_command.h"
#include "cli/record_command.h"
#include "cli/serve_command.h"
#include "cli/transport_option.h"
#include "cli_parse.h"
#include "exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{ntprof::daemon_cli::WithTransportChoices(R"(NAME
    ntprofd - NVMe-oF profiling agent: per sampled command, where the time went on this machine

SYNOPSIS
    ntprofd probe  --role host|target [--transport {transports}] [--json]
    ntprofd record --role host|target [--transport {transports}] -s N -o FILE.ntp [options]
    ntprofd serve  --role host|target [--transport {transports}] [--collector HOST:PORT] [options]

DESCRIPTION
    ntprofd runs on each NVMe-oF host and target. With eBPF on an unmodified kernel it stamps
    each sampled command at the boundaries of its stages - host block layer, host driver,
    network, target driver, storage - on this machine's monotonic clock. Host and target keep the
    same commands (the same N and salt) without talking, and ntprofctl joins their recordings.

    Needs root (or CAP_BPF + CAP_PERFMON + CAP_SYS_ADMIN) and a kernel with BTF. Which kernel
    events are used, and how each attaches here, is what `ntprofd probe` prints.)")};
  app.footer(R"(
COMMANDS
    Run `ntprofd COMMAND --help` for the options, exit status and examples of a command above.

EXIT STATUS
    0 success, 1 the work failed (the message says what and what to do), 2 bad flags.)");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ntprofd ") + NTPROF_VERSION);
  int exit_code = ntprof::cli::kOk;
  ntprof::daemon_cli::AddProbeCommand(app, &exit_code);
  ntprof::daemon_cli::AddRecordCommand(app, &exit_code);
  ntprof::daemon_cli::AddServeCommand(app, &exit_code);
  return ntprof::cli::ParseAndRun(app, argc, argv, "ntprofd", exit_code,
                                 ntprof::cli::kBadInput);
}
