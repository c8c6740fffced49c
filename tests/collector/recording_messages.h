// A .ntp recording as the agent-stream messages an agent would send for it: SessionOpened with the
// file's header, one SessionBatch per batch, SessionClosed with its trailer (seq left 0).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ntp_reader.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::testing {

inline std::vector<v1::AgentMessage> RecordingMessages(const std::string& path) {
  auto reader = NtpReader::Open(path);
  if (!reader.ok()) throw std::runtime_error(std::string(reader.status().message()));
  std::vector<v1::AgentMessage> messages(1);
  *messages[0].mutable_opened()->mutable_header() = (*reader)->header();
  const std::string session = (*reader)->header().session();
  v1::RecordBatch batch;
  while (true) {
    auto more = (*reader)->Next(&batch);
    if (!more.ok() || !*more) break;
    v1::AgentMessage& m = messages.emplace_back();
    m.mutable_batch()->set_session(session);
    *m.mutable_batch()->mutable_batch() = batch;
  }
  v1::AgentMessage& closed = messages.emplace_back();
  closed.mutable_closed()->set_session(session);
  *closed.mutable_closed()->mutable_trailer() = (*reader)->trailer();
  return messages;
}

}  // namespace ntprof::testing
