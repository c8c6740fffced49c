// libFuzzer target: arbitrary bytes as a .ntp recording. The reader must return an error or
// records, never crash, hang or allocate without bound (frames are capped at 64 MiB).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "ntp_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/ntprof-fuzz-" + std::to_string(::getpid()) + ".ntp";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  for (bool salvage : {false, true}) {
    auto reader = ntprof::NtpReader::Open(path, {.salvage = salvage});
    if (!reader.ok()) continue;
    ntprof::v1::RecordBatch batch;
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok() || !*more) break;
    }
  }
  return 0;
}
