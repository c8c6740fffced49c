#include "export_command.h"

#include <iostream>

#include "collector_target.h"
#include "exit_codes.h"
#include "session_download.h"

namespace ntprof::cli {
namespace {

struct ExportArgs {
  CollectorFlags collector;
  std::string session;
  std::string out;
};

int RunExport(const ExportArgs& args) {
  return WithCollector<v1::Collector>("export", args.collector, [&](auto& stub, auto& target) {
    const std::filesystem::path out(args.out);
    const bool single_file = out.extension() == ".ntp";
    Download download = DownloadSession(stub, args.session, out, single_file);
    if (!download.rpc.ok()) return RpcFailure("export", target, download.rpc);
    if (!download.local_error.empty()) {
      std::cerr << "ntprofctl export: " << download.local_error << "\n";
      return single_file ? kBadInput : kFailed;
    }
    for (const auto& f : download.files) std::cout << f << "\n";
    return kOk;
  });
}

}  // namespace

void AddExportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "Write a session's records to .ntp files");
  cmd->footer(R"HELP(
Fetches the records the collector stored for SESSION and writes the same .ntp files `ntprofd
record` writes: into a directory, one <hostname>-<role>.ntp per agent; or, when the session has
a single agent, into FILE.ntp. `ntprofctl report` and `compare` read them with no server.

Examples:
  ntprofctl export base -o runs/base/ && ntprofctl report runs/base/
  ntprofctl export target-only -o target.ntp)HELP");
  cmd->add_option("session", args->session, "Session name")->required();
  cmd->add_option("-o,--output", args->out, "FILE.ntp or a directory")->required();
  AddCollectorFlags(cmd, &args->collector);
  cmd->callback([args, exit_code] { *exit_code = RunExport(*args); });
}

}  // namespace ntprof::cli
