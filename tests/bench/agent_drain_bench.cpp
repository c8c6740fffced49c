// agent_drain_bench - how many records per second the agent's user-space path handles on one
// core: every record the ring buffer hands over is checked for missing stamps, converted to the
// wire form (ConvertRecord), appended to the interval's batch and, every kMaxBatch records,
// written to a .ntp file (NtpFileSink), exactly as Recorder does. The kernel's ring buffer itself
// is not part of it: the records are synthetic (host NVMe/TCP reads with every stamp), made before
// the clock starts. Prints records/s of CPU time against the 1,000,000 records/s target and
// against a baseline that only copies each record, in one run.
//
//   agent_drain_bench [RECORDS] [OUTPUT.ntp]    (default 2,000,000 records, a temporary file)
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "batch_sink.h"
#include "interval_batch.h"
#include "ntprof_record.h"
#include "record_converter.h"

namespace {

constexpr int kMaxBatch = 8192;  // Recorder's batch cut
constexpr double kTargetPerSecond = 1'000'000;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

std::vector<ntprof_record> SyntheticRecords(size_t n) {
  std::vector<ntprof_record> out(n);
  uint64_t t = 1'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    ntprof_record& r = out[i];
    r.role = NTPROF_ROLE_HOST;
    r.transport = NTPROF_TRANSPORT_TCP;
    r.stack = NTPROF_STACK_KERNEL;
    r.opcode = 0x02;  // read
    r.nsid = 1;
    r.slba = (i * 7919) % 1'000'000;
    r.nlb = 7;
    r.bytes = 4096;
    r.qid = 1 + i % 4;
    r.cid = static_cast<uint16_t>(i);
    r.dev = (259u << 20) | 1;
    for (int s = 0; s < NTPROF_HOST_STAMPS; ++s) r.stamps[s] = t + 1000 * s;
    t += 10'000;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  std::string path = argc > 2 ? argv[2] : "";
  if (path.empty()) {
    char tmpl[] = "/tmp/ntprof-drain-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) {
      std::perror("agent_drain_bench: cannot create a temporary file");
      return 1;
    }
    close(fd);
    path = tmpl;
  }
  const std::vector<ntprof_record> records = SyntheticRecords(n);
  const ntprof::agent::RecordIdentity id{"nqn.2024-01.io.ntprof:bench", 1, "nvme0n1"};

  // Baseline: the least any drain does, one copy of each record out of the ring.
  double t0 = CpuSeconds();
  std::vector<ntprof_record> copies;
  copies.reserve(kMaxBatch);
  uint64_t checksum = 0;
  for (const ntprof_record& r : records) {
    if (copies.size() == kMaxBatch) copies.clear();
    copies.push_back(r);
    checksum += copies.back().cid;
  }
  const double copy_s = CpuSeconds() - t0;

  ntprof::v1::FileHeader header;
  header.set_hostname("bench");
  header.set_role(ntprof::v1::ROLE_HOST);
  header.set_transport(ntprof::v1::TRANSPORT_TCP);
  header.set_sample_rate(1);
  auto sink = ntprof::agent::NtpFileSink::Create(path, header);
  if (!sink.ok()) {
    std::fprintf(stderr, "agent_drain_bench: %s\n", std::string(sink.status().message()).c_str());
    return 1;
  }
  ntprof::agent::IntervalBatch batch;
  size_t missing = 0;
  t0 = CpuSeconds();
  for (const ntprof_record& r : records) {
    if (ntprof::agent::MissesCoreStamp(r)) {
      ++missing;
      continue;
    }
    ntprof::agent::ConvertRecord(r, id, "bench", batch.batch().add_records());
    if (batch.batch().records_size() == kMaxBatch) {
      if (auto st = batch.Flush(**sink, nullptr, false, 0); !st.ok()) {
        std::fprintf(stderr, "agent_drain_bench: %s\n", std::string(st.message()).c_str());
        return 1;
      }
    }
  }
  if (batch.batch().records_size() > 0) (void)batch.Flush(**sink, nullptr, true, 0);
  if (auto st = (*sink)->Finalize(ntprof::v1::FileTrailer()); !st.ok()) {
    std::fprintf(stderr, "agent_drain_bench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  const double drain_s = CpuSeconds() - t0;
  if (argc <= 2) unlink(path.c_str());

  const double per_s = n / drain_s;
  std::printf("agent drain, %zu synthetic records (%zu dropped as incomplete; checksum %llu)\n", n,
              missing, static_cast<unsigned long long>(checksum));
  std::printf("  copy only (baseline): %12.0f records/s of CPU\n", n / copy_s);
  std::printf("  check, convert, batch and write .ntp: %12.0f records/s of CPU, %.0f ns each\n",
              per_s, 1e9 * drain_s / n);
  std::printf("  ratio to the 1,000,000 records/s target: %.2f; cost over the baseline: %.1fx\n",
              per_s / kTargetPerSecond, drain_s / copy_s);
  return 0;
}
