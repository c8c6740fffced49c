#include "watch_command.h"

#include <google/protobuf/util/json_util.h>

#include <iostream>

#include "collector_target.h"
#include "exit_codes.h"
#include "whole_number.h"
#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {
namespace {

struct WatchArgs {
  CollectorFlags collector;
  std::string session;
  std::string format = "table";
  std::vector<std::string> hosts, targets, groups, subsystems;
  uint32_t interval_s = 1;
  int count = 0;
};

std::string Clock(uint64_t wall_ns) {
  const time_t seconds = static_cast<time_t>(wall_ns / 1'000'000'000);
  char text[16];
  tm local{};
  localtime_r(&seconds, &local);
  strftime(text, sizeof(text), "%H:%M:%S", &local);
  return text;
}

void PrintTable(const v1::WatchUpdate& update, uint64_t* dropped_seen) {
  std::cout << "-- " << Clock(update.interval_end_wall_ns()) << " (" << update.interval_s()
            << " s)";
  if (update.dropped_updates() > *dropped_seen) {
    std::cout << "  [" << update.dropped_updates() - *dropped_seen
              << " update(s) dropped: this client read too slowly]";
    *dropped_seen = update.dropped_updates();
  }
  std::cout << "\n";
  if (update.groups_size() == 0) std::cout << "  (no sampled commands)\n";
  for (const auto& g : update.groups()) std::cout << g.line() << "\n";
  std::cout.flush();
}

void PrintNdjson(const v1::WatchUpdate& update) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string line;
  (void)google::protobuf::util::MessageToJsonString(update, &line, options);
  std::cout << line << "\n";
  std::cout.flush();
}

int RunWatch(const WatchArgs& args) {
  return WithCollector<v1::Collector>("watch", args.collector, [&](auto& stub, auto& target) {
    v1::WatchRequest request;
    request.set_session(args.session);
    request.set_interval_s(args.interval_s);
    for (const auto& h : args.hosts) request.add_hosts(h);
    for (const auto& t : args.targets) request.add_targets(t);
    for (const auto& g : args.groups) request.add_groups(g);
    for (const auto& s : args.subsystems) request.add_subsystems(s);
    grpc::ClientContext context;
    auto reader = stub.Watch(&context, request);
    v1::WatchUpdate update;
    uint64_t dropped_seen = 0;
    int received = 0;
    while (reader->Read(&update)) {
      if (args.format == "ndjson") {
        PrintNdjson(update);
      } else {
        PrintTable(update, &dropped_seen);
      }
      if (args.count > 0 && ++received >= args.count) {
        context.TryCancel();
        break;
      }
    }
    const grpc::Status status = reader->Finish();
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
      return RpcFailure("watch", target, status);
    }
    return kOk;
  });
}

}  // namespace

void AddWatchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand("watch", "Live per-interval summaries of the cluster");
  cmd->footer(R"HELP(
Prints, every interval, one line per group (operation, size, device) of every running session (or
only session NAME): sampled commands, rate, latency and each stage's share, joined across hosts and
targets. Filters keep commands seen by the named hosts / targets / subsystems, and groups whose name
starts with the given text. A terminal that reads too slowly loses its oldest intervals; the line
says how many. Stops at Ctrl-C (or after --count intervals).

Exit status: 0 after --count intervals, 1 collector unreachable, 2 no session NAME, or it
is stopped (`ntprofctl report NAME` shows what it recorded).

Examples:
  ntprofctl watch
  ntprofctl watch base --host web1 --group read
  ntprofctl watch -o ndjson --interval 10 | jq -c '.groups[] | {name, mean_ns}')HELP");
  cmd->add_option("session", args->session, "Only this session (default: all running)");
  cmd->add_option("-o,--output", args->format,
                  "table (default) or ndjson (one object per interval)")
      ->check(CLI::IsMember({"table", "ndjson"}))
      ->default_str("table");
  cmd->add_option("--host", args->hosts, "Only commands from these hosts")->delimiter(',');
  cmd->add_option("--target", args->targets, "Only commands served by these targets")
      ->delimiter(',');
  cmd->add_option("--group", args->groups, "Only groups starting with this (\"read 4KiB\")");
  cmd->add_option("--subsystem", args->subsystems, "Only these subsystem NQNs")->delimiter(',');
  cmd->add_option("--interval", args->interval_s, "Seconds per line: 1 or 10")
      ->check(CLI::IsMember({1, 10}))
      ->default_str("1");
  cmd->add_option("--count", args->count, "Stop after this many intervals")
      ->check(WholeNumber<int>(1));
  AddCollectorFlags(cmd, &args->collector);
  cmd->callback([args, exit_code] { *exit_code = RunWatch(*args); });
}

}  // namespace ntprof::cli
