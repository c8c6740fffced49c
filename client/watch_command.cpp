#include "watch_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "collector_target.h"
#include "exit_codes.h"
#include "watch_end.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "watch_ndjson.h"
#include "whole_number.h"

namespace ntprof::cli {
namespace {

struct WatchArgs {
  CollectorFlags collector;
  std::string session;
  std::string format = "table";
  std::vector<std::string> hosts, targets, groups, subsystems;
  uint32_t interval_s = 1;
  int count = 0;
  uint32_t wait_s = 30;  // for session NAME to start
};

// Pauses between reconnect attempts: short at first (a restart takes a second or two), then at
// most kMaxBackoff so the watch resumes soon after a longer outage.
constexpr std::chrono::milliseconds kFirstBackoff{500};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
// How often a watch started before its session asks whether it started: the watch misses at most
// this much of the session's beginning.
constexpr std::chrono::milliseconds kSessionPoll{200};

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
  for (const auto& note : update.notes()) std::cout << "  note: " << note << "\n";
  std::cout.flush();
}

v1::WatchRequest RequestOf(const WatchArgs& args) {
  v1::WatchRequest request;
  request.set_session(args.session);
  request.set_interval_s(args.interval_s);
  for (const auto& h : args.hosts) request.add_hosts(h);
  for (const auto& t : args.targets) request.add_targets(t);
  for (const auto& g : args.groups) request.add_groups(g);
  for (const auto& s : args.subsystems) request.add_subsystems(s);
  return request;
}

// What the watch has printed so far, across reconnects.
struct WatchProgress {
  int received = 0;           // intervals printed
  uint64_t dropped_seen = 0;  // the current stream's drop count already reported
};

// How one Watch call ended.
struct StreamEnd {
  bool count_reached = false;
  bool got_updates = false;  // the stream delivered at least one interval
  grpc::Status status;
  std::string session_ended;  // the collector's words when the watched session ended
};

// Prints the stream's intervals until --count is reached or the stream ends. on_first_update runs
// before the first interval is printed.
template <typename OnFirstUpdate>
StreamEnd FollowStream(v1::Collector::Stub& stub, const v1::WatchRequest& request,
                       const WatchArgs& args, WatchProgress* progress,
                       OnFirstUpdate on_first_update) {
  StreamEnd end;
  grpc::ClientContext context;
  auto reader = stub.Watch(&context, request);
  v1::WatchUpdate update;
  progress->dropped_seen = 0;  // a new stream counts its drops from 0
  while (reader->Read(&update)) {
    if (!end.got_updates) {
      on_first_update();
      // A collector of a ring from before watch merged its peers' intervals says what its stream
      // leaves out (their subsystems).
      const auto& metadata = context.GetServerInitialMetadata();
      if (auto it = metadata.find("ntprof-watch-scope"); it != metadata.end())
        std::cerr << "ntprofctl watch: note: " << std::string(it->second.data(), it->second.size())
                  << "\n";
    }
    end.got_updates = true;
    if (args.format == "ndjson") {
      std::cout << WatchUpdateJson(update) << "\n";
      std::cout.flush();
    } else {
      PrintTable(update, &progress->dropped_seen);
    }
    if (args.count > 0 && ++progress->received >= args.count) {
      context.TryCancel();
      end.count_reached = true;
      break;
    }
  }
  end.status = reader->Finish();
  if (end.status.ok()) {
    const auto& trailer = context.GetServerTrailingMetadata();
    if (auto it = trailer.find(common::kWatchEndKey); it != trailer.end())
      end.session_ended = std::string(it->second.data(), it->second.size());
  }
  return end;
}

// A script may start the watch before the session: asks again until session NAME exists (and then
// follows it) or --wait seconds passed.
StreamEnd AwaitSession(v1::Collector::Stub& stub, const v1::WatchRequest& request,
                       const WatchArgs& args, WatchProgress* progress) {
  std::cerr << "ntprofctl watch: no session '" << args.session << "' yet; waiting up to "
            << args.wait_s << " s for it to start (--wait)\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.wait_s);
  StreamEnd end;
  do {
    std::this_thread::sleep_for(kSessionPoll);
    end = FollowStream(stub, request, args, progress, [] {});
  } while (!end.got_updates && end.status.error_code() == grpc::StatusCode::NOT_FOUND &&
           std::chrono::steady_clock::now() < deadline);
  return end;
}

// The watch is over without an error: --count intervals printed, or the session ended.
bool WatchDone(const StreamEnd& end) {
  if (!end.session_ended.empty()) std::cerr << "ntprofctl watch: " << end.session_ended << "\n";
  return end.count_reached || !end.session_ended.empty();
}

// The stream broke because the collector went away (killed, restarted, the network path lost),
// not because it refused the request: worth reconnecting.
bool CollectorWentAway(const grpc::Status& status) {
  return status.ok() || status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::CANCELLED;
}

// A stub on a new connection to the collector (the old one died with the collector).
std::unique_ptr<v1::Collector::Stub> Redial(const CollectorFlags& flags,
                                            const CollectorTarget& old) {
  CollectorTarget fresh;
  std::string error;
  // The TLS files were read once already; should one have vanished since, keep the old channel.
  if (!OpenCollector(flags, &fresh, &error)) fresh.channel = old.channel;
  return v1::Collector::NewStub(fresh.channel);
}

int RunWatch(const WatchArgs& args) {
  CollectorFlags flags = args.collector;
  flags.own_connection = true;  // each reconnect dials afresh, see CollectorFlags
  return WithCollector<v1::Collector>("watch", flags, [&](auto& stub, auto& target) {
    const v1::WatchRequest request = RequestOf(args);
    WatchProgress progress;
    StreamEnd end = FollowStream(stub, request, args, &progress, [] {});
    if (!end.got_updates && end.status.error_code() == grpc::StatusCode::NOT_FOUND &&
        !args.session.empty() && args.wait_s > 0) {
      end = AwaitSession(stub, request, args, &progress);
      if (!end.got_updates && end.status.error_code() == grpc::StatusCode::NOT_FOUND) {
        std::cerr << "ntprofctl watch: session '" << args.session << "' did not start within "
                  << args.wait_s << " s; `ntprofctl status` lists the sessions\n";
        return kBadInput;
      }
    }
    if (WatchDone(end)) return kOk;
    // Unreachable from the start, or a refusal: nothing to resume.
    if (!end.got_updates || !CollectorWentAway(end.status)) {
      return RpcFailure("watch", target, end.status);
    }
    while (true) {
      std::cerr << "ntprofctl watch: collector at " << target.address << " went away"
                << (end.status.error_message().empty() ? ""
                                                       : " (" + end.status.error_message() + ")")
                << "; reconnecting\n";
      auto backoff = kFirstBackoff;
      do {
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, kMaxBackoff);
        end = FollowStream(*Redial(flags, target), request, args, &progress, [&] {
          std::cerr << "ntprofctl watch: collector at " << target.address
                    << " is back; watching again\n";
        });
        if (WatchDone(end)) return kOk;
      } while (!end.got_updates && CollectorWentAway(end.status));
      if (!CollectorWentAway(end.status)) {
        // The session was stopped while the collector was away: the watch is over.
        if (end.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
          std::cerr << "ntprofctl watch: " << end.status.error_message() << "\n";
          return kOk;
        }
        return RpcFailure("watch", target, end.status);
      }
    }
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
says how many. Stops at Ctrl-C, after --count intervals, or when session NAME ends (stopped, or
its --duration passed: its last interval, up to the stop, is printed first). Started before
session NAME exists, watch waits up to --wait seconds for it to start (asking every 0.2 s), so a
script can start the watch first.

When the collector goes away mid-watch (restarted, killed, the network lost), watch says so on
stderr, reconnects (every 0.5 s at first, then every 5 s at most), resumes the same watch and says
when the collector is back.

Asked of a collector of a ring (ntprof-collector --peer), watch covers the whole fleet: that
collector merges its peers' intervals into its own. An interval that misses a collector (down, or
late by more than 1.5 s) says which under its lines ("note: collector ADDR: ..."). A group that
several collectors hold is combined: counts summed, means weighted by count; its p99 is the
largest of theirs, an upper bound.

Exit status: 0 after --count intervals, or when session NAME ended (also while the collector was
away); 1 collector unreachable at the start; 2 no session NAME within --wait, or it is stopped
already (`ntprofctl report NAME` shows what it recorded).

Examples:
  ntprofctl watch
  ntprofctl watch base --host web1 --group read
  ntprofctl watch base -o ndjson >base.ndjson &   # before the session: waits for it
  ntprofctl start base -s 100 -d 60               # the watch ends with the session
  ntprofctl watch -o ndjson --interval 10 | jq -c '.groups[] | {name, mean_ns}')HELP" +
              std::string(kWatchNdjsonFields));
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
  cmd->add_option("--wait", args->wait_s,
                  "Seconds to wait for session NAME to start when it does not exist yet (0: fail "
                  "at once)")
      ->check(WholeNumber<uint32_t>(0, 86'400))
      ->capture_default_str();
  AddCollectorFlags(cmd, &args->collector);
  cmd->callback([args, exit_code] { *exit_code = RunWatch(*args); });
}

}  // namespace ntprof::cli
