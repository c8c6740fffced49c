// agent_drain_bench - how many records per second the agent's user-space path handles on one
// core: every record the ring buffer hands over is checked for missing stamps, converted to the
// wire form (ConvertRecord), appended to the interval's batch and, every kMaxBatch records,
// written to a .ntp file (NtpFileSink), exactly as Recorder does. The kernel's ring buffer itself
// is not part of it: the records are synthetic (host NVMe/TCP reads with every stamp), made before
// the clock starts. Prints records/s of CPU time against the 1,000,000 records/s target and
// against a baseline that only copies each record, in one run. Then the same drain through the
// split among sessions (SessionFanOut) with one session and with two sessions that both keep every
// record: the agent's work per record when a record goes to two sessions (docs/control-plane.md).
// Last, what `ntprofd serve` does with a record: one session's share into the collector's spool
// (CollectorRing, no collector dialled, the spool without fsync).
//
//   agent_drain_bench [RECORDS] [OUTPUT.ntp]    (default 2,000,000 records, a temporary file)
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_sink.h"
#include "collector_ring.h"
#include "interval_batch.h"
#include "ntprof_record.h"
#include "record_converter.h"
#include "session_fan_out.h"

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

// Checks, converts and batches every record into sink, as Recorder does; false on a write error.
bool Drain(const std::vector<ntprof_record>& records, const ntprof::agent::RecordIdentity& id,
           ntprof::agent::BatchSink& sink, size_t* missing) {
  ntprof::agent::IntervalBatch batch;
  const auto identity = ntprof::agent::EncodeIdentity(id, "bench");
  for (const ntprof_record& r : records) {
    if (ntprof::agent::MissesCoreStamp(r)) {
      ++*missing;
      continue;
    }
    batch.batch().Add(r, identity);
    if (batch.batch().size() == kMaxBatch) {
      if (auto st = batch.Flush(sink, nullptr, false, 0); !st.ok()) {
        std::fprintf(stderr, "agent_drain_bench: %s\n", std::string(st.message()).c_str());
        return false;
      }
    }
  }
  if (batch.batch().size() > 0) (void)batch.Flush(sink, nullptr, true, 0);
  if (auto st = sink.Finalize(ntprof::v1::FileTrailer()); !st.ok()) {
    std::fprintf(stderr, "agent_drain_bench: %s\n", std::string(st.message()).c_str());
    return false;
  }
  return true;
}

// CPU seconds of Drain through a SessionFanOut with `sessions` sessions that all keep every record.
std::optional<double> SplitDrain(const std::vector<ntprof_record>& records,
                                 const ntprof::agent::RecordIdentity& id,
                                 const ntprof::v1::FileHeader& header, int sessions) {
  ntprof::agent::SessionFanOut fan_out;
  std::vector<std::unique_ptr<ntprof::agent::NtpFileSink>> sinks;
  std::vector<std::string> paths;
  for (int i = 0; i < sessions; ++i) {
    char tmpl[] = "/tmp/ntprof-drain-session-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) return std::nullopt;
    close(fd);
    paths.push_back(tmpl);
    auto sink = ntprof::agent::NtpFileSink::Create(tmpl, header);
    if (!sink.ok()) return std::nullopt;
    sinks.push_back(std::move(*sink));
    ntprof::v1::RecordingSettings settings;
    settings.set_session("s" + std::to_string(i));
    settings.set_sample_rate(1);
    fan_out.Join(settings, sinks.back().get(), 0, 0,
                 [](absl::StatusOr<ntprof::v1::FileTrailer>, const std::string&) {}, [] {});
  }
  size_t missing = 0;
  const double t0 = CpuSeconds();
  const bool ok = Drain(records, id, fan_out, &missing);
  const double seconds = CpuSeconds() - t0;
  for (const std::string& p : paths) unlink(p.c_str());
  if (!ok) return std::nullopt;
  return seconds;
}

// What Recordings does with a session's share in `ntprofd serve`: into the collector ring's spool.
class SpoolSink : public ntprof::agent::BatchSink {
 public:
  explicit SpoolSink(ntprof::agent::CollectorRing* ring) : ring_(ring) {}
  absl::Status WriteBatch(const ntprof::agent::BatchShare& batch) override {
    return ring_->AppendBatch("s0", batch);
  }
  absl::Status Finalize(const ntprof::v1::FileTrailer& trailer) override {
    return ring_->AppendClosed("s0", &trailer, "");
  }

 private:
  ntprof::agent::CollectorRing* ring_;
};

// CPU seconds of Drain through one session into a spool (ntprofd serve), or nullopt.
std::optional<double> SpoolDrain(const std::vector<ntprof_record>& records,
                                 const ntprof::agent::RecordIdentity& id) {
  char tmpl[] = "/tmp/ntprof-drain-spool-XXXXXX";
  if (!mkdtemp(tmpl)) return std::nullopt;
  const std::string dir = tmpl;
  std::optional<double> seconds;
  {
    ntprof::agent::CollectorRing ring(
        ntprof::agent::CollectorRingOptions{.spool = {.dir = dir, .fsync = false},
                                            .home_key = "bench"},
        [](const std::string&) -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
          return absl::UnavailableError("the bench dials no collector");
        },
        [](const ntprof::agent::Spool&) { return ntprof::v1::AgentHello(); },
        [](const ntprof::v1::CollectorMessage&) {});
    if (ring.SetMembers({}).ok()) {
      SpoolSink sink(&ring);
      ntprof::agent::SessionFanOut fan_out;
      ntprof::v1::RecordingSettings settings;
      settings.set_session("s0");
      settings.set_sample_rate(1);
      fan_out.Join(settings, &sink, 0, 0,
                   [](absl::StatusOr<ntprof::v1::FileTrailer>, const std::string&) {}, [] {});
      size_t missing = 0;
      const double t0 = CpuSeconds();
      if (Drain(records, id, fan_out, &missing)) seconds = CpuSeconds() - t0;
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return seconds;
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
  size_t missing = 0;
  t0 = CpuSeconds();
  if (!Drain(records, id, **sink, &missing)) return 1;
  const double drain_s = CpuSeconds() - t0;
  if (argc <= 2) unlink(path.c_str());

  // The split among sessions: 1 and 2 sessions, each keeping every record (1 in 1, no filter),
  // each into its own .ntp file. The least CPU of three runs each: the machine may be shared.
  double split_s[3] = {0, 1e9, 1e9};
  for (int run = 0; run < 3; ++run) {
    for (int sessions = 1; sessions <= 2; ++sessions) {
      auto seconds = SplitDrain(records, id, header, sessions);
      if (!seconds) return 1;
      split_s[sessions] = std::min(split_s[sessions], *seconds);
    }
  }

  double spool_s = 1e9;
  for (int run = 0; run < 3; ++run) {
    auto seconds = SpoolDrain(records, id);
    if (!seconds) {
      std::fprintf(stderr, "agent_drain_bench: cannot drain into a spool under /tmp\n");
      return 1;
    }
    spool_s = std::min(spool_s, *seconds);
  }

  const double per_s = n / drain_s;
  std::printf("agent drain, %zu synthetic records (%zu dropped as incomplete; checksum %llu)\n", n,
              missing, static_cast<unsigned long long>(checksum));
  std::printf("  copy only (baseline): %12.0f records/s of CPU\n", n / copy_s);
  std::printf("  check, convert, batch and write .ntp: %12.0f records/s of CPU, %.0f ns each\n",
              per_s, 1e9 * drain_s / n);
  std::printf("  ratio to the 1,000,000 records/s target: %.2f; cost over the baseline: %.1fx\n",
              per_s / kTargetPerSecond, drain_s / copy_s);
  std::printf("  through the split among sessions, 1 session: %.0f ns each; 2 sessions that both "
              "keep it: %.0f ns each (a second session adds %.0f ns a record)\n",
              1e9 * split_s[1] / n, 1e9 * split_s[2] / n, 1e9 * (split_s[2] - split_s[1]) / n);
  std::printf("  ntprofd serve, one session into the collector's spool: %.0f ns each (%.1fx the "
              ".ntp drain)\n",
              1e9 * spool_s / n, spool_s / drain_s);
  return 0;
}
