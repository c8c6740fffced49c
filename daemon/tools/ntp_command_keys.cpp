// ntp_command_keys FILE.ntp...: one line per read/write record, "ROLE QID CID SLBA FIRST_STAMP",
// in numeric order (`LC_ALL=C sort` the lines before comm). A verification aid for the testbed (not
// installed): two sessions recorded by one agent hold the very same record for a command both
// sampled, so comparing these lines tells which commands each session kept (the nested sampling
// check of the control-plane scenario).
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "ntp_reader.h"
#include "nvme_opcode.h"

namespace {

using Key = std::tuple<int, uint32_t, uint32_t, uint64_t, uint64_t>;

uint64_t FirstStamp(const ntprof::v1::Record& r) {
  uint64_t first = UINT64_MAX;
  for (uint64_t s : r.stamps()) {
    if (s) first = std::min(first, s);
  }
  return first == UINT64_MAX ? 0 : first;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ntp_command_keys FILE.ntp...\n");
    return 2;
  }
  std::vector<Key> keys;
  for (int a = 1; a < argc; ++a) {
    auto reader = ntprof::NtpReader::Open(argv[a]);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
      return 1;
    }
    ntprof::v1::RecordBatch batch;
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok()) {
        std::fprintf(stderr, "%s: %s\n", argv[a], std::string(more.status().message()).c_str());
        return 1;
      }
      if (!*more) break;
      for (const auto& r : batch.records()) {
        if (ntprof::IsReadOrWrite(r.opcode())) keys.emplace_back(r.role(), r.qid(), r.cid(), r.slba(), FirstStamp(r));
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& [role, qid, cid, slba, first] : keys) {
    std::printf("%s %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 "\n",
                role == ntprof::v1::ROLE_HOST ? "host" : "target", qid, cid, slba, first);
  }
  return 0;
}
