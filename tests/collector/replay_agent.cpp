// replay_agent: a stand-in ntprofd for command-line tests. Connects to the collector as HOSTNAME
// with ROLE, waits for StartRecording, then streams FILE.ntp (its header names the session) and
// stays connected until killed.
//   replay_agent COLLECTOR HOSTNAME host|target FILE.ntp
#include <unistd.h>

#include <iostream>

#include "synthetic_agent.h"

using namespace ntprof;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: replay_agent COLLECTOR HOSTNAME host|target FILE.ntp\n";
    return 2;
  }
  const std::string role = argv[3];
  testing::SyntheticAgent agent(argv[2], role == "host" ? v1::ROLE_HOST : v1::ROLE_TARGET);
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  if (!agent.Connect(channel)) {
    std::cerr << "replay_agent: cannot connect to " << argv[1] << ": " << agent.last_error()
              << "\n";
    return 1;
  }
  std::cout << "connected" << std::endl;
  if (!agent.WaitControl(1, std::chrono::minutes(5))) return 1;
  agent.SpoolRecording(argv[4]);
  agent.SendAll();
  if (!agent.WaitAcked(agent.last_seq())) return 1;
  std::cout << "sent" << std::endl;
  pause();  // stays connected, like an agent
  return 0;
}
