// paced_agent: a host and a target agent that stream commands of KNOWN stage durations to the
// collector over SECONDS, a batch at a time, so that a scraper sees the stage histograms grow
// while the session runs (the ground truth of the Prometheus test). Connects as host1 and
// target1, waits for the start of SESSION, streams, closes the session's recordings and stays
// connected until killed. Writes DIR/truth.txt first: one line per stage, "stage_id seconds", and
// "lost_records CAUSE COUNT", the losses the host agent declares.
//   paced_agent COLLECTOR SESSION SECONDS DIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include "recording_writer.h"
#include "synthetic_agent.h"

using namespace ntprof;

namespace {

constexpr int kCommands = 1600;
constexpr int kBatch = 16;
constexpr uint64_t kLostRingBufferFull = 3;

// Every command alike, each stage in the middle of a different bucket of the collector's
// histogram (1, 2, 5, 10, 20, 50, 100, 200 us ...), storage the largest.
testing::CommandTiming Timing(int) {
  return {.block_submit = 1'000, .driver_submit = 2'000, .driver_complete = 1'500,
          .block_complete = 500, .network = 30'000, .receive = 2'000, .submit = 2'000,
          .storage = 150'000, .respond = 1'500, .send = 1'500};
}

void WriteTruth(const std::filesystem::path& path) {
  const testing::CommandTiming t = Timing(0);
  const uint64_t host_block = t.block_submit + t.block_complete;
  const uint64_t host_driver = t.driver_submit + t.driver_complete;
  const uint64_t target_driver = t.receive + t.submit + t.respond + t.send;
  std::ofstream out(path);
  out << "host_block " << host_block * 1e-9 << "\n"
      << "host_driver " << host_driver * 1e-9 << "\n"
      << "network " << t.network * 1e-9 << "\n"
      << "target_driver " << target_driver * 1e-9 << "\n"
      << "storage " << t.storage * 1e-9 << "\n"
      << "end_to_end " << (host_block + host_driver + t.network + target_driver + t.storage) * 1e-9
      << "\n"
      << "lost_records ring_buffer_full " << kLostRingBufferFull << "\n";
}

// Streams MESSAGES (opened, batches, closed) one at a time, each acked before the next, with
// PAUSE between batches.
bool Stream(testing::SyntheticAgent& agent, std::vector<v1::AgentMessage> messages,
            std::chrono::milliseconds pause, bool declare_losses) {
  for (size_t i = 0; i < messages.size(); ++i) {
    v1::AgentMessage& m = messages[i];
    const bool is_batch = m.has_batch();
    if (declare_losses && m.has_batch() && i + 2 == messages.size()) {
      m.mutable_batch()->mutable_batch()->mutable_losses()->set_ring_buffer_full(
          kLostRingBufferFull);
    }
    agent.Spool(std::move(m));
    if (!agent.SendAll() || !agent.WaitAcked(agent.last_seq())) return false;
    if (is_batch) std::this_thread::sleep_for(pause);
  }
  return true;
}

bool WaitForStart(testing::SyntheticAgent& agent, const std::string& session) {
  for (size_t handled = 0;; ++handled) {
    if (!agent.WaitControl(handled + 1, std::chrono::minutes(2))) return false;
    const v1::CollectorMessage control = agent.control()[handled];
    if (control.has_start() && control.start().settings().session() == session) return true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: paced_agent COLLECTOR SESSION SECONDS DIR\n";
    return 2;
  }
  const std::string session = argv[2];
  const double seconds = std::stod(argv[3]);
  const std::filesystem::path dir = argv[4];
  std::filesystem::create_directories(dir);
  WriteTruth(dir / "truth.txt");
  testing::RunSpec spec{.commands = kCommands, .session = session, .batch = kBatch};
  testing::WriteRun((dir / "host.ntp").string(), (dir / "target.ntp").string(), spec, Timing);

  testing::SyntheticAgent host("host1", v1::ROLE_HOST), target("target1", v1::ROLE_TARGET);
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  if (!host.Connect(channel) || !target.Connect(channel)) {
    std::cerr << "paced_agent: cannot connect to " << argv[1] << ": " << host.last_error()
              << target.last_error() << "\n";
    return 1;
  }
  std::cout << "connected" << std::endl;
  if (!WaitForStart(host, session) || !WaitForStart(target, session)) {
    std::cerr << "paced_agent: session " << session << " never started\n";
    return 1;
  }
  const auto pause = std::chrono::milliseconds(
      static_cast<int64_t>(seconds * 1000 * kBatch / kCommands));
  std::thread target_stream([&] {
    if (!Stream(target, testing::RecordingMessages((dir / "target.ntp").string()), pause, false)) {
      std::cerr << "paced_agent: the target stream failed\n";
    }
  });
  const bool host_ok =
      Stream(host, testing::RecordingMessages((dir / "host.ntp").string()), pause, true);
  target_stream.join();
  if (!host_ok) {
    std::cerr << "paced_agent: the host stream failed\n";
    return 1;
  }
  std::cout << "sent" << std::endl;
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}
