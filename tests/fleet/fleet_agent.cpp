// fleet_agent: one host and one target agent (hostN, targetN) streaming a synthetic run of known
// stages to a collector, paced over SECONDS, and riding out a collector that is killed and
// restarted: like ntprofd it keeps what is unacked, dials again and replays. Writes the run it
// streams to DIR/hostN.ntp and DIR/targetN.ntp first (the file report's input), prints
// "connected", then "sent" once the collector acked everything, and stays until killed.
//   fleet_agent COLLECTOR SESSION DIR PAIR COMMANDS SECONDS
#include <filesystem>
#include <iostream>

#include "recording_writer.h"
#include "synthetic_agent.h"

using namespace ntprof;

namespace {

constexpr int kBatch = 20;

// Durations that vary with i, so percentiles are not all one value; every 5th command a write.
testing::CommandTiming Timing(int i) {
  const uint64_t wobble = static_cast<uint64_t>((i * 7919) % 97) * 1'000;
  return {.block_submit = 1'000 + (i % 5) * 100, .driver_submit = 2'000, .driver_complete = 1'500,
          .block_complete = 500, .network = 30'000 + wobble, .receive = 2'000, .submit = 2'000,
          .storage = 100'000 + 3 * wobble, .respond = 1'500, .send = 1'500};
}

struct Side {
  testing::SyntheticAgent agent;
  std::vector<v1::AgentMessage> messages;
};

bool Reconnect(testing::SyntheticAgent& agent, const std::string& address) {
  for (int attempt = 0; attempt < 600; ++attempt) {
    if (agent.Connect(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool WaitForStart(testing::SyntheticAgent& agent, const std::string& session) {
  for (size_t handled = 0;; ++handled) {
    if (!agent.WaitControl(handled + 1, std::chrono::minutes(2))) return false;
    const v1::CollectorMessage control = agent.control()[handled];
    if (control.has_start() && control.start().settings().session() == session) return true;
  }
}

// Sends the messages one at a time, each acked before the next; a collector that goes away is
// dialled again and what it did not ack is replayed.
bool Stream(Side& side, const std::string& address, std::chrono::milliseconds pause) {
  for (auto& m : side.messages) {
    const bool batch = m.has_batch();
    side.agent.Spool(std::move(m));
    while (!side.agent.SendAll() ||
           !side.agent.WaitAcked(side.agent.last_seq(), std::chrono::seconds(2))) {
      if (!Reconnect(side.agent, address)) return false;
    }
    if (batch) std::this_thread::sleep_for(pause);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: fleet_agent COLLECTOR SESSION DIR PAIR COMMANDS SECONDS\n";
    return 2;
  }
  const std::string address = argv[1], session = argv[2], pair = argv[4];
  const std::filesystem::path dir = argv[3];
  const int commands = std::stoi(argv[5]);
  const double seconds = std::stod(argv[6]);
  std::filesystem::create_directories(dir);
  const std::string host_name = "host" + pair, target_name = "target" + pair;
  const std::string host_path = (dir / (host_name + ".ntp")).string();
  const std::string target_path = (dir / (target_name + ".ntp")).string();
  testing::RunSpec spec{.commands = commands, .session = session, .batch = kBatch};
  spec.wall_start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  spec.span_ns = static_cast<uint64_t>(commands) * spec.gap_ns + 10'000'000;
  const uint32_t cntlid = static_cast<uint32_t>(std::stoi(pair));
  testing::WriteRun(host_path, target_path, spec, Timing, [&](int i) {
    testing::CommandId id{.nqn = "nqn.2024-01.io.ntprof:array" + pair, .cntlid = cntlid,
                          .qid = 1 + static_cast<uint32_t>(i % 2),
                          .cid = static_cast<uint32_t>(i % 64),
                          .slba = static_cast<uint64_t>(i) * 8};
    if (i % 5 == 0) id.opcode = 0x01;
    return id;
  });

  Side host{testing::SyntheticAgent(host_name, v1::ROLE_HOST), {}};
  Side target{testing::SyntheticAgent(target_name, v1::ROLE_TARGET), {}};
  for (auto [side, path, name] : {std::tuple{&host, host_path, host_name},
                                  std::tuple{&target, target_path, target_name}}) {
    side->messages = testing::RecordingMessages(path);
    // ntprofd's header names the agent as its hello does.
    side->messages.front().mutable_opened()->mutable_header()->set_hostname(name);
    if (!Reconnect(side->agent, address)) {
      std::cerr << "fleet_agent: cannot connect to " << address << "\n";
      return 1;
    }
  }
  std::cout << "connected" << std::endl;
  if (!WaitForStart(host.agent, session) || !WaitForStart(target.agent, session)) {
    std::cerr << "fleet_agent: session " << session << " never started\n";
    return 1;
  }
  const auto pause = std::chrono::milliseconds(
      static_cast<int64_t>(seconds * 1000 * kBatch / std::max(commands, 1)));
  bool target_ok = false;
  std::thread target_stream([&] { target_ok = Stream(target, address, pause); });
  const bool host_ok = Stream(host, address, pause);
  target_stream.join();
  if (!host_ok || !target_ok) {
    std::cerr << "fleet_agent: a stream failed\n";
    return 1;
  }
  std::cout << "sent" << std::endl;
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}
