#include "session_commands.h"

#include <chrono>
#include <iostream>
#include <optional>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent_answers.h"
#include "collector_target.h"
#include "exit_codes.h"
#include "list_option.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "session_lookup.h"
#include "session_start.h"

namespace ntprof::cli {
namespace {

struct StartArgs {
  CollectorFlags collector;
  SessionStartFlags session;
};

struct NameArgs {
  CollectorFlags collector;
  std::string name;
};

const char* RoleName(v1::Role role) {
  return role == v1::ROLE_HOST ? "host" : role == v1::ROLE_TARGET ? "target" : "?";
}

void PrintSession(const v1::SessionInfo& s) {
  const v1::RecordingSettings& settings = s.settings();
  std::cout << absl::StrFormat("session %s: %s, 1 in %d, salt %d", s.name(),
                               s.state() == v1::SESSION_RUNNING ? "running" : "stopped",
                               settings.sample_rate(), settings.salt());
  if (settings.duration_s() != 0) std::cout << ", " << settings.duration_s() << " s";
  if (!settings.subsystems().empty())
    std::cout << ", subsystems " << absl::StrJoin(settings.subsystems(), ",");
  if (!settings.devices().empty()) std::cout << ", devices " << absl::StrJoin(settings.devices(), ",");
  if (s.standing()) std::cout << " (the standing session)";
  std::cout << "\n";
  for (const auto& a : s.agents()) {
    std::cout << absl::StrFormat("  %-24s %-6s %-12s ", a.hostname(), RoleName(a.role()),
                                 a.connected() ? "connected" : "disconnected");
    if (a.refusal().empty()) {
      std::cout << absl::StrFormat("%d records in %d batches\n", a.records(), a.batches());
    } else {
      std::cout << "refused: " << a.refusal() << "\n";
    }
  }
  std::cout << absl::StrFormat("  live join: %d matched, %d host only, %d target only\n",
                               s.matched(), s.host_only(), s.target_only());
  for (const auto& note : s.notes()) std::cout << "  note: " << note << "\n";
}

int RunStart(const StartArgs& args) {
  return WithCollector<v1::Collector>("start", args.collector, [&](auto& stub, auto& target) {
    v1::SessionInfo info;
    const grpc::Status status = StartAndAwait(stub, args.session, &info);
    if (!status.ok()) return RpcFailure("start", target, status);
    PrintSession(info);
    if (SayRefusals("start", info)) return kFailed;
    if (const auto waiting = Unanswered(info); !waiting.empty() && args.session.wait_s > 0) {
      std::cerr << "ntprofctl start: no answer within " << args.session.wait_s << " s from "
                << absl::StrJoin(waiting, ", ") << "; `ntprofctl status " << info.name()
                << "` shows whether they record\n";
    }
    return kOk;
  });
}

int RunStop(const NameArgs& args) {
  return WithCollector<v1::Collector>("stop", args.collector, [&](auto& stub, auto& target) {
    std::optional<v1::SessionInfo> before;
    if (const grpc::Status status = FindSession(stub, args.name, &before); !status.ok()) {
      return RpcFailure("stop", target, status);
    }
    if (before && before->state() == v1::SESSION_STOPPED) {
      // What the caller wants holds: `stop NAME && report NAME` works after a --duration ended it.
      std::cerr << "ntprofctl stop: session '" << args.name
                << "' was already stopped; nothing changed\n";
      PrintSession(*before);
      return kOk;
    }
    v1::StopSessionRequest request;
    request.set_name(args.name);
    v1::SessionInfo info;
    const grpc::Status status = stub.StopSession(UnaryContext().get(), request, &info);
    if (!status.ok()) return RpcFailure("stop", target, status);
    PrintSession(info);
    return kOk;
  });
}

int RunStatus(const NameArgs& args) {
  return WithCollector<v1::Collector>("status", args.collector, [&](auto& stub, auto& target) {
    v1::ListSessionsReply reply;
    const grpc::Status status = stub.ListSessions(UnaryContext().get(), {}, &reply);
    if (!status.ok()) return RpcFailure("status", target, status);
    // In a ring every agent keeps one stream to each collector: count machines, list streams.
    std::set<std::string> agents;
    for (const auto& a : reply.agents()) agents.insert(a.hostname());
    std::cout << "collector " << target.address << ": " << agents.size() << " agent(s) connected";
    if (static_cast<size_t>(reply.agents_size()) != agents.size()) {
      std::cout << " (" << reply.agents_size()
                << " streams: each agent streams to every collector of the ring)";
    }
    std::cout << "\n";
    for (const auto& a : reply.agents()) {
      std::cout << absl::StrFormat("  %-24s %-6s from %s, acked seq %d, %d duplicates, %d lost\n",
                                   a.hostname(), RoleName(a.role()), a.peer(), a.acked_seq(),
                                   a.duplicates(), a.gaps());
    }
    bool found = args.name.empty();
    for (const auto& s : reply.sessions()) {
      if (!args.name.empty() && s.name() != args.name) continue;
      found = true;
      PrintSession(s);
    }
    if (!found) {
      std::cerr << "ntprofctl status: no session named '" << args.name << "'\n";
      return kBadInput;
    }
    return kOk;
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, int* exit_code) {
  auto start = std::make_shared<StartArgs>();
  CLI::App* cmd = app.add_subcommand("start", "Start a recording session on the cluster");
  cmd->footer(R"HELP(
Asks the collector to start session NAME on the selected agents: every connected host and target
agent, or only those named with --hosts / --targets. All of them sample the same one command in N
with one salt, so the collector joins each command's host and target halves.

Examples:
  ntprofctl start base -s 100
  ntprofctl start slow-drive -s 10 --hosts web1,web2 --targets array1 -d 60

An agent records several sessions at once (each with its own rate and filters, beside the
collector's standing session): it samples at the finest rate and gives each session its share.
Then waits (--wait) for every agent to answer: it records, or it refuses (a required hook missing,
a session with its own --salt beside others). A refused session records on the other agents; when
all refused, it is stopped. `ntprofctl status NAME` shows each agent's answer.

Exit status: 0 started (agents that did not answer within --wait are named on stderr),
1 collector unreachable, or an agent refused (the message names each and why), 2 bad name, a name
already used, or an agent that is not connected (the message lists the connected ones).)HELP");
  cmd->add_option("name", start->session.name, "Session name: letters, digits, . _ -")->required();
  AddSessionStartFlags(cmd, &start->session, true);
  AddCollectorFlags(cmd, &start->collector);
  cmd->callback([start, exit_code] { *exit_code = RunStart(*start); });

  auto stop = std::make_shared<NameArgs>();
  cmd = app.add_subcommand("stop", "Stop a recording session");
  cmd->footer(R"HELP(
Stops session NAME on its agents. Its records stay on the collector for report, compare and export.
A session already stopped (by an earlier stop, or its --duration) stays as it is; stop says so.

Examples:
  ntprofctl stop base && ntprofctl report base
  ntprofctl stop base --collector unix:///run/ntprof/collector.sock

Exit status: 0 stopped, or already stopped (said on stderr: the session is as asked), 1 collector
unreachable, 2 no session of that name.)HELP");
  cmd->add_option("name", stop->name, "Session name")->required();
  AddCollectorFlags(cmd, &stop->collector);
  cmd->callback([stop, exit_code] { *exit_code = RunStop(*stop); });

  auto status = std::make_shared<NameArgs>();
  cmd = app.add_subcommand("status", "Connected agents and sessions");
  cmd->footer(R"HELP(
Lists the agents connected to the collector (with their stream's acked sequence number, duplicates
discarded and batches declared lost) and every session with its records per agent. Asked of a
collector of a ring, it covers the whole ring: the agents are counted once, and each of their
streams (one per collector) is listed.

Examples:
  ntprofctl status
  ntprofctl status base --collector collector1:7420 --tls-ca ca.pem)HELP");
  cmd->add_option("name", status->name, "Only this session");
  AddCollectorFlags(cmd, &status->collector);
  cmd->callback([status, exit_code] { *exit_code = RunStatus(*status); });
}

}  // namespace ntprof::cli
