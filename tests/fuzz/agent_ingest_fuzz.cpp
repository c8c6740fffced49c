// libFuzzer target: arbitrary bytes as what an agent sends on its Connect stream. The input is cut
// into frames (2-byte little-endian length, then that many bytes), each parsed as an AgentMessage
// and handed to the collector's ingest path (SessionRegistry::Ingest: sequence tracking, record
// checks, session files, live join) exactly as the stream reactor does after the hello. Whatever
// the bytes, ingest must answer with an ack or an error status, never crash, hang or grow without
// bound; a session opened by the fuzzer's agent stays reportable.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "collector_metrics.h"
#include "session_registry.h"
#include "session_reports.h"

namespace {

using namespace ntprof;
using namespace ntprof::collector;

class DroppingChannel : public AgentChannel {
 public:
  void Send(const v1::CollectorMessage&) override {}
};

struct Collector {
  CollectorMetrics metrics;
  std::unique_ptr<SessionRegistry> registry;

  Collector() {
    RegistryOptions options;
    options.data_dir = std::filesystem::temp_directory_path() /
                       ("ntprof-ingest-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(options.data_dir);
    options.join.max_pending = 10'000;
    registry = std::move(*SessionRegistry::Open(options, &metrics));
    v1::StartSessionRequest start;
    start.set_name("fz");
    start.set_sample_rate(1);
    (void)registry->StartSession(start);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Collector collector;
  if (size < 1) return 0;
  static uint64_t epoch = 0;
  v1::AgentHello hello;
  hello.set_hostname(data[0] & 1 ? "fuzz-target" : "fuzz-host");
  hello.set_role(data[0] & 1 ? v1::ROLE_TARGET : v1::ROLE_HOST);
  hello.set_stream_epoch(++epoch);  // a fresh sequence each input, as after an agent restart
  DroppingChannel channel;
  if (!collector.registry->AttachAgent(&channel, hello, "fuzz").ok()) return 0;
  size_t at = 1;
  while (at + 2 <= size) {
    const size_t length = data[at] | (size_t{data[at + 1]} << 8);
    at += 2;
    if (length > size - at) break;
    v1::AgentMessage message;
    if (message.ParseFromArray(data + at, static_cast<int>(length))) {
      (void)collector.registry->Ingest(&channel, message);
    }
    at += length;
  }
  collector.registry->Tick();
  collector.registry->DetachAgent(&channel);
  if (auto stored = collector.registry->Stored("fz"); stored.ok()) (void)SessionReport(*stored);
  return 0;
}
