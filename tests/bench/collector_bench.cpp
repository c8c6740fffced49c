// Collector benchmarks (printed, not asserted):
//  1. ingest + store + live join, no network: records/s through SessionRegistry with the join on
//     the ingesting thread (--join-threads 1) and on 2 join threads, as a ratio, best of 3 each;
//  2. the same records over gRPC (unix socket) from two synthetic agents, 1 and 2 join threads;
//  3. agent-to-watch latency: from a batch leaving an agent to its line reaching a watch client.
// The commands spread over 16 subsystems (the key the join threads divide them by).
// Run: build-*/tests/collector/collector_bench [commands [join threads: section 1 only]]
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "collector_server.h"
#include "record_factory.h"
#include "spdlog/spdlog.h"
#include "synthetic_agent.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::collector;
using namespace ntprof::testing;
using Clock = std::chrono::steady_clock;

namespace {

class NullChannel : public AgentChannel {
 public:
  void Send(const v1::CollectorMessage&) override {}
};

v1::AgentHello Hello(const std::string& hostname, v1::Role role) {
  v1::AgentHello h;
  h.set_hostname(hostname);
  h.set_role(role);
  h.set_stream_epoch(1);
  return h;
}

// Batches of 64 records of both halves of `commands` reads, as the two agents would send them.
std::vector<v1::AgentMessage> Stream(v1::Role role, int commands, const std::string& session,
                                     uint64_t first_seq) {
  std::vector<v1::AgentMessage> out(1);
  v1::FileHeader& h = *out[0].mutable_opened()->mutable_header();
  h.set_role(role);
  h.set_session(session);
  h.set_sample_rate(1);
  h.set_start_mono_ns(1'000'000);
  h.set_start_wall_ns(1'700'000'000'000'000'000ull);
  for (int i = 0; i < commands; ++i) {
    if (i % 64 == 0) out.emplace_back().mutable_batch()->set_session(session);
    CommandId id{.nqn = "nqn.2024-01.io.ntprof:subsystem-" + std::to_string(i % 16),
                 .cid = static_cast<uint32_t>(i / 16 % 128),
                 .slba = static_cast<uint64_t>(i) * 8};
    const uint64_t t = 1'000'000 + static_cast<uint64_t>(i) * 10'000;
    *out.back().mutable_batch()->mutable_batch()->add_records() =
        role == v1::ROLE_HOST
            ? MakeRecord(role, id, HostStamps(t, 300, 800, 30'000, 470, 200), "nvme0n1")
            : MakeRecord(role, id, TargetStamps(t + 5'000, 200, 300, 20'000, 210, 300), "nullb0");
  }
  uint64_t seq = first_seq;
  for (auto& m : out) m.set_seq(seq++);
  return out;
}

void StartSession(SessionRegistry* registry, const std::string& name) {
  v1::StartSessionRequest request;
  request.set_name(name);
  request.mutable_settings()->set_sample_rate(1);
  if (!registry->StartSession(request).ok()) std::abort();
}

// Records/s of one run.
double IngestWithoutNetwork(int commands, size_t join_threads) {
  TempDir dir;
  CollectorMetrics metrics;
  RegistryOptions options;
  options.data_dir = dir.path();
  options.join_threads = join_threads;
  auto registry = std::move(*SessionRegistry::Open(options, &metrics));
  NullChannel host, target;
  (void)registry->AttachAgent(&host, Hello("host1", v1::ROLE_HOST), "bench");
  (void)registry->AttachAgent(&target, Hello("target1", v1::ROLE_TARGET), "bench");
  StartSession(registry.get(), "bench");
  auto hs = Stream(v1::ROLE_HOST, commands, "bench", 1);
  auto ts = Stream(v1::ROLE_TARGET, commands, "bench", 1);
  const auto t0 = Clock::now();
  for (size_t i = 0; i < hs.size(); ++i) {  // interleaved, as two live agents would be
    (void)registry->Ingest(&host, std::move(hs[i]));  // as the stream reactor hands them over
    (void)registry->Ingest(&target, std::move(ts[i]));
  }
  const uint64_t matched = registry->List().sessions(0).matched();  // waits for the join threads
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "ingest+store+join, no network, %zu join thread(s): %d host + %d target records in %.2f s "
      "= %.0f records/s (%llu matched)\n",
      join_threads, commands, commands, s, 2.0 * commands / s,
      static_cast<unsigned long long>(matched));
  if (matched != static_cast<uint64_t>(commands)) std::printf("  NOT ALL MATCHED\n");
  return 2.0 * commands / s;
}

double IngestOverGrpc(int commands, size_t join_threads) {
  TempDir dir;
  ServerOptions options;
  options.join_threads = join_threads;
  options.listen = {"unix:" + dir.File("c.sock")};
  options.metrics_listen = "";
  options.data_dir = dir.File("data");
  CollectorServer server(options);
  if (!server.Start().ok()) std::abort();
  auto channel = grpc::CreateChannel(options.listen[0], grpc::InsecureChannelCredentials());
  SyntheticAgent host("host1", v1::ROLE_HOST), target("target1", v1::ROLE_TARGET);
  host.Connect(channel);
  target.Connect(channel);
  StartSession(server.registry(), "bench");
  for (auto& m : Stream(v1::ROLE_HOST, commands, "bench", 1)) host.Spool(m);
  for (auto& m : Stream(v1::ROLE_TARGET, commands, "bench", 1)) target.Spool(m);
  const auto t0 = Clock::now();
  std::thread h([&] { host.SendAll(); });
  target.SendAll();
  h.join();
  host.WaitAcked(host.last_seq(), std::chrono::minutes(5));
  target.WaitAcked(target.last_seq(), std::chrono::minutes(5));
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "ingest+store+join over gRPC (unix socket, 2 agents), %zu join thread(s): %.2f s = %.0f "
      "records/s\n",
      join_threads, s, 2.0 * commands / s);
  return 2.0 * commands / s;
}

// Best of three runs each, alternating, so a burst of other work on the machine hits both.
void CompareJoinThreads(const char* what, const std::function<double(size_t)>& run) {
  double best[3] = {0, 0, 0};
  for (int round = 0; round < 3; ++round) {
    for (size_t threads : {size_t{1}, size_t{2}}) best[threads] = std::max(best[threads], run(threads));
  }
  std::printf("%s: 2 join threads / 1 = %.0f / %.0f records/s = %.2f (best of 3 each)\n", what,
              best[2], best[1], best[2] / best[1]);
}

void AgentToWatchLatency(int rounds) {
  TempDir dir;
  ServerOptions options;
  options.listen = {"unix:" + dir.File("c.sock")};
  options.metrics_listen = "";
  options.data_dir = dir.File("data");
  options.tick_s = 0.05;  // how often intervals are checked; an interval still lasts 1 s
  CollectorServer server(options);
  if (!server.Start().ok()) std::abort();
  auto channel = grpc::CreateChannel(options.listen[0], grpc::InsecureChannelCredentials());
  SyntheticAgent host("host1", v1::ROLE_HOST);
  host.Connect(channel);
  StartSession(server.registry(), "latency");
  auto stub = v1::Collector::NewStub(channel);
  grpc::ClientContext context;
  auto watch = stub->Watch(&context, v1::WatchRequest{});
  auto messages = Stream(v1::ROLE_HOST, 64 * rounds, "latency", 1);
  host.Spool(messages[0]);
  host.SendAll();
  double sum = 0, worst = 0;
  v1::WatchUpdate update;
  for (int r = 1; r <= rounds; ++r) {
    // Wait for an interval to end, then send one batch and time until a line shows it.
    while (watch->Read(&update) && update.groups_size() != 0) {
    }
    host.Spool(messages[static_cast<size_t>(r)]);
    const auto t0 = Clock::now();
    host.SendAll();
    while (watch->Read(&update) && update.groups_size() == 0) {
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    sum += ms;
    worst = std::max(worst, ms);
  }
  context.TryCancel();
  std::printf(
      "agent-to-watch latency (1 s intervals): mean %.0f ms, worst %.0f ms over %d batches "
      "(bounded by the interval: a batch shows when its interval ends)\n",
      sum / rounds, worst, rounds);
}

// A positive whole number from argv, or 0 (not one; atoi would take "--help" for 0 commands).
int PositiveArgument(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value > 0 && value <= 100'000'000 ? static_cast<int>(value) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const int commands = argc > 1 ? PositiveArgument(argv[1]) : 200'000;
  const int threads = argc > 2 ? PositiveArgument(argv[2]) : 1;
  if (argc > 3 || commands == 0 || threads == 0) {
    std::fprintf(stderr,
                 "usage: collector_bench [COMMANDS [JOIN_THREADS]]\n"
                 "  COMMANDS      commands per measurement (default 200000)\n"
                 "  JOIN_THREADS  run only section 1 (no network) with that many join threads, "
                 "3 rounds (for a profiler)\n");
    return 2;
  }
  if (argc > 2) {  // one configuration only (for a profiler): section 1 with that many threads
    for (int round = 0; round < 3; ++round) IngestWithoutNetwork(commands, threads);
    return 0;
  }
  CompareJoinThreads("no network",
                     [&](size_t threads) { return IngestWithoutNetwork(commands, threads); });
  CompareJoinThreads("over gRPC", [&](size_t threads) { return IngestOverGrpc(commands, threads); });
  AgentToWatchLatency(5);
  return 0;
}
