// Test aid: prints an agent's Agent.Status as protobuf text (ntprofctl has no agent-status verb).
//   agent_status_query unix:PATH
#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>

#include <iostream>

#include "ntprof/v1/agent.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: agent_status_query unix:PATH\n";
    return 2;
  }
  auto stub =
      ntprof::v1::Agent::NewStub(grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  ntprof::v1::AgentStatus status;
  grpc::Status st = stub->Status(&context, ntprof::v1::AgentStatusRequest{}, &status);
  if (!st.ok()) {
    std::cerr << "agent_status_query: " << st.error_message() << "\n";
    return 1;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(status, &text);
  std::cout << text;
  return 0;
}
