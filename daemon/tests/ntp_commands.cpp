// ntp_commands FILE.ntp...: one line per record, "opcode slba nlb" - what the serve test compares
// with the commands it issued and the sampling it computes on its own.
#include <cstdio>

#include "ntp_reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ntp_commands FILE.ntp...\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    auto reader = ntprof::NtpReader::Open(argv[i]);
    if (!reader.ok()) {
      std::fprintf(stderr, "ntp_commands: %s\n", std::string(reader.status().message()).c_str());
      return 1;
    }
    ntprof::v1::RecordBatch batch;
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok()) {
        std::fprintf(stderr, "ntp_commands: %s\n", std::string(more.status().message()).c_str());
        return 1;
      }
      if (!*more) break;
      for (const auto& r : batch.records()) {
        std::printf("%u %llu %u\n", r.opcode(), static_cast<unsigned long long>(r.slba()), r.nlb());
      }
    }
  }
  return 0;
}
