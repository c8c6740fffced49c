// replay_agent: a stand-in ntprofd for command-line tests. Connects to the collector as HOSTNAME
// with ROLE, waits for StartRecording, then streams FILE.ntp (its header names the session) and
// stays connected until killed. Like ntprofd (one recording at a time), it answers every later
// start of another session with a refusal (SessionClosed with an error).
//   replay_agent COLLECTOR HOSTNAME host|target FILE.ntp
#include <iostream>

#include "synthetic_agent.h"

using namespace ntprof;

namespace {

v1::AgentMessage Refusal(const std::string& session, const std::string& recording) {
  v1::AgentMessage m;
  m.mutable_closed()->set_session(session);
  m.mutable_closed()->set_error("already recording session " + recording +
                                "; stop it first (one recording at a time per agent)");
  return m;
}

}  // namespace

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
  std::string recording;
  for (size_t handled = 0;; ++handled) {
    while (!agent.WaitControl(handled + 1, std::chrono::minutes(5))) {
    }
    const v1::CollectorMessage control = agent.control()[handled];
    if (!control.has_start()) continue;
    const std::string& session = control.start().settings().session();
    if (recording.empty()) {
      recording = session;
      agent.SpoolRecording(argv[4]);
    } else if (session != recording) {
      agent.Spool(Refusal(session, recording));
    }
    agent.SendAll();
    if (!agent.WaitAcked(agent.last_seq())) return 1;
    std::cout << (session == recording ? "sent" : "refused " + session) << std::endl;
  }
}
