// Real kernel events: the local_block programs (the block-layer hooks the host shares) recording
// O_DIRECT I/O to a loop device. Needs root, BPF with BTF and losetup; skips (exit 77) otherwise.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "agent_engine.h"
#include "batch_sink.h"
#include "block_devices.h"
#include "bpf_test_support.h"
#include "loop_device.h"
#include "device_counters.h"
#include "device_events.h"
#include "ntp_reader.h"
#include "ntprof_sampler.h"
#include "recorder.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDeviceBytes = 64ull << 20;
constexpr uint32_t kBlock = 4096;
constexpr int kBlocks = 256;
constexpr uint32_t kSampleRate = 4;
constexpr uint64_t kSalt = 0x5eed;
constexpr uint8_t kNvmeWrite = 0x01, kNvmeRead = 0x02;

using ntprof::testing::LoopDevice;

// The loop device's kernel device number, as the agent watches it.
uint32_t DevOf(const LoopDevice& loop) {
  auto dev = ResolveBlockDevice(loop.name());
  REQUIRE(dev.ok());
  return *dev;
}

// kBlocks distinct 4 KiB-aligned offsets, in a fixed pseudo-random order (no merging).
std::vector<uint64_t> Offsets() {
  std::vector<uint64_t> all;
  for (uint64_t off = 0; off < kDeviceBytes; off += kBlock) all.push_back(off);
  std::mt19937_64 rng(42);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(kBlocks);
  return all;
}

bool SampledLocal(uint8_t opcode, uint64_t offset) {
  // local_block.bpf.c maps a request to (opcode, nsid 0, slba = sector, nlb = sectors - 1, cid 0)
  return ntprof_sampled(opcode, 0, offset / 512, kBlock / 512 - 1, 0, kSalt, kSampleRate);
}

void DoDirectIo(const LoopDevice& loop, const std::vector<uint64_t>& offsets, bool write) {
  REQUIRE(loop.DirectIo(offsets, kBlock, write));
}

SessionOptions LocalSession(const LoopDevice& loop) {
  SessionOptions s;
  s.role = Role::kHost;
  s.transport = v1::TRANSPORT_LOCAL;
  s.sample_rate = kSampleRate;
  s.salt = kSalt;
  s.device = loop.name();
  return s;
}

TEST_CASE("loop_device_io_yields_the_sampled_commands_with_ordered_stamps") {
  // The typed variant (tp_btf) loads fields directly, the untyped one (raw_tp) through probe reads
  // (bpf/ntprof_bpf_common.h, NTPROF_READ): one handler body, two ways of reading; both must agree.
  const std::string attach = GENERATE(as<std::string>{}, "tp_btf", "raw_tp");
  INFO("attach type " << attach);
  LoopDevice loop(kDeviceBytes);
  const uint32_t dev = DevOf(loop);
  LiveKernelFacts facts;
  SessionOptions session = LocalSession(loop);
  session.prefer_attach = attach;
  auto engine = AgentEngine::Start(session, facts);
  REQUIRE(engine.ok());
  for (const char* hook : {"block_rq_issue", "block_rq_complete"}) {
    const VariantVerdict* chosen = nullptr;
    for (const HookDecision& d : (*engine)->plan().hooks())
      if (d.hook.name == hook) chosen = d.chosen_variant();
    REQUIRE(chosen != nullptr);
    CHECK(AttachTypeName(chosen->type, false) == attach);
  }
  REQUIRE((*engine)->SetWatchedDevices({dev}).ok());
  DeviceCounters counters;  // what the kernel's block statistics say the device completed
  counters.Watch({dev});

  std::vector<uint64_t> offsets = Offsets();
  DoDirectIo(loop, offsets, /*write=*/true);
  DoDirectIo(loop, offsets, /*write=*/false);

  std::vector<ntprof_record> records;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    REQUIRE((*engine)->Poll(100, [&](const ntprof_record& r) { records.push_back(r); }).ok());
  }

  std::set<uint64_t> ours(offsets.begin(), offsets.end());
  std::set<uint64_t> expected_writes, expected_reads, got_writes, got_reads;
  for (uint64_t off : offsets) {
    if (SampledLocal(kNvmeWrite, off)) expected_writes.insert(off);
    if (SampledLocal(kNvmeRead, off)) expected_reads.insert(off);
  }
  for (const ntprof_record& r : records) {
    // Every record, ours or another reader's (udev probes new loop devices), was sampled by the
    // same rule the C++ sampler applies to its fields.
    CHECK(ntprof_sampled(r.opcode, r.nsid, r.slba, r.nlb, r.cid, kSalt, kSampleRate));
    CHECK(r.dev == dev);
    CHECK(r.role == NTPROF_ROLE_HOST);
    CHECK(r.transport == NTPROF_TRANSPORT_LOCAL);
    uint64_t off = r.slba * 512;
    if (!ours.count(off)) continue;
    CHECK(r.nlb == kBlock / 512 - 1);
    CHECK(r.bytes == kBlock);
    CHECK(r.stamps[NTPROF_H0_BLOCK_START] > 0);
    CHECK(r.stamps[NTPROF_H0_BLOCK_START] <= r.stamps[NTPROF_H1_DRIVER_SUBMIT]);
    CHECK(r.stamps[NTPROF_H1_DRIVER_SUBMIT] <= r.stamps[NTPROF_H5_BLOCK_DONE]);
    CHECK((r.flags & NTPROF_F_WRITE) == (r.opcode == kNvmeWrite ? NTPROF_F_WRITE : 0u));
    (r.opcode == kNvmeWrite ? got_writes : got_reads).insert(off);
  }
  INFO("sampled " << got_writes.size() << " of " << kBlocks << " writes, " << got_reads.size()
                  << " reads; 1 in " << kSampleRate);
  // Each expected command is a record, or counted: the kernel now and then skips a completion
  // hook (completion_missed, found when the request is reused) and the last such command may still
  // sit in the in-flight table.
  (*engine)->DetachHooks();
  size_t left = (*engine)->SweepInflight(UINT64_MAX, [](const ntprof_record&) {});
  KernelLosses losses = (*engine)->ReadLosses();
  CHECK(std::includes(expected_writes.begin(), expected_writes.end(), got_writes.begin(), got_writes.end()));
  CHECK(std::includes(expected_reads.begin(), expected_reads.end(), got_reads.begin(), got_reads.end()));
  CHECK(got_writes.size() + got_reads.size() + losses.completion_missed + left ==
        expected_writes.size() + expected_reads.size());
  CHECK(expected_writes.size() > kBlocks / kSampleRate / 2);  // the test really sampled something

  auto counted = counters.Read();
  REQUIRE(counted.count(dev));
  CHECK(counted[dev].writes == static_cast<uint64_t>(kBlocks));
  CHECK(counted[dev].write_bytes == static_cast<uint64_t>(kBlocks) * kBlock);
  CHECK(counted[dev].reads >= static_cast<uint64_t>(kBlocks));

  CHECK(losses.ring_buffer_full == 0);
  CHECK(losses.inflight_table_full == 0);
}

TEST_CASE("unwatched_device_is_not_sampled") {
  LoopDevice loop(kDeviceBytes);
  LiveKernelFacts facts;
  auto engine = AgentEngine::Start(LocalSession(loop), facts);
  REQUIRE(engine.ok());  // no SetWatchedDevices: nothing is watched
  DoDirectIo(loop, Offsets(), /*write=*/true);
  int n = 0;
  REQUIRE((*engine)->Poll(300, [&](const ntprof_record&) { ++n; }).ok());
  CHECK(n == 0);
}

// The end of a recording: once sampling stops, the same I/O that was sampled before yields no
// record, while every hook is still attached (detaching them one by one under running I/O would
// leave commands with part of their stamps).
TEST_CASE("stop_sampling_samples_no_new_command_while_the_hooks_stay_attached") {
  LoopDevice loop(kDeviceBytes);
  LiveKernelFacts facts;
  auto engine = AgentEngine::Start(LocalSession(loop), facts);
  REQUIRE(engine.ok());
  REQUIRE((*engine)->SetWatchedDevices({DevOf(loop)}).ok());
  std::vector<uint64_t> offsets = Offsets();
  auto records_of_writes = [&] {
    DoDirectIo(loop, offsets, /*write=*/true);
    int n = 0;
    for (int i = 0; i < 5; ++i)
      REQUIRE((*engine)->Poll(100, [&](const ntprof_record& r) { n += r.opcode == kNvmeWrite; }).ok());
    return n;
  };
  CHECK(records_of_writes() > 0);  // sampling is on once Start returned
  CHECK((*engine)->StopSampling(1000) == 0);  // nothing was left in flight
  CHECK(records_of_writes() == 0);
  KernelLosses losses = (*engine)->ReadLosses();
  CHECK(losses.completion_missed == 0);
}

// A recording of loop started into a temporary .ntp file (the caller removes it).
struct LoopRecording {
  std::unique_ptr<Recorder> recorder;
  std::unique_ptr<NtpFileSink> sink;
  fs::path file;
};

LoopRecording StartRecording(const LoopDevice& loop, double interval_s, double duration_s,
                             const std::string& session_name) {
  LiveKernelFacts facts;
  RecordingOptions o;
  o.session = LocalSession(loop);
  o.interval_s = interval_s;
  o.duration_s = duration_s;
  o.session_name = session_name;
  auto recorder = Recorder::Start(o, facts);
  REQUIRE(recorder.ok());
  LoopRecording r;
  r.file = fs::temp_directory_path() / (session_name + "-" + std::to_string(::getpid()) + ".ntp");
  auto sink = NtpFileSink::Create(r.file.string(), (*recorder)->header());
  REQUIRE(sink.ok());
  r.recorder = std::move(*recorder);
  r.sink = std::move(*sink);
  return r;
}

TEST_CASE("record_writes_a_readable_ntp_file_for_a_loop_device") {
  LoopDevice loop(kDeviceBytes);
  LoopRecording rec = StartRecording(loop, 0.5, 2.5, "loop-test");
  auto& recorder = rec.recorder;
  const fs::path& out = rec.file;

  std::atomic<bool> stop{false};
  std::vector<uint64_t> offsets = Offsets();
  std::thread io([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    DoDirectIo(loop, offsets, /*write=*/true);
  });
  REQUIRE(recorder->Run(*rec.sink, stop).ok());
  io.join();
  CHECK(recorder->stop_reason() == "duration elapsed");

  auto reader = NtpReader::Open(out.string());
  REQUIRE(reader.ok());
  const v1::FileHeader& h = (*reader)->header();
  CHECK(h.sample_rate() == kSampleRate);
  CHECK(h.salt() == kSalt);
  CHECK(h.role() == v1::ROLE_HOST);
  CHECK(h.transport() == v1::TRANSPORT_LOCAL);
  CHECK(h.session() == "loop-test");
  size_t writes = 0;
  uint64_t counted_writes = 0;
  uint64_t last_seq = 0;
  v1::RecordBatch batch;
  while (true) {
    auto more = (*reader)->Next(&batch);
    REQUIRE(more.ok());
    if (!*more) break;
    CHECK(batch.seq() == last_seq + 1);
    last_seq = batch.seq();
    for (const v1::Record& r : batch.records()) {
      CHECK(r.device() == loop.name());
      REQUIRE(r.stamps_size() == NTPROF_HOST_STAMPS);
      if (r.opcode() == kNvmeWrite) ++writes;
    }
    for (const v1::DeviceCounters& c : batch.counters()) {
      CHECK(c.device() == loop.name());
      counted_writes += c.writes();
    }
  }
  CHECK((*reader)->finalized());
  size_t expected = 0;
  for (uint64_t off : offsets) expected += SampledLocal(kNvmeWrite, off);
  CHECK(writes == expected);
  CHECK(counted_writes == static_cast<uint64_t>(kBlocks));
  CHECK((*reader)->trailer().losses().missing_stamp() == 0);
  fs::remove(out);
}

TEST_CASE("device_events_report_a_loop_device_attached") {
  auto events = DeviceEvents::Open();
  REQUIRE(events.ok());
  events->Drain();
  LoopDevice loop(kDeviceBytes);  // losetup: the kernel announces the device's change
  bool seen = false;
  for (int i = 0; i < 40 && !seen; ++i) {
    seen = events->Drain();
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(seen);
}

// Removes loop's device from the system (detached, then the device itself: sysfs forgets it).
void RemoveLoopDevice(const LoopDevice& loop) {
  std::system(("losetup -d " + loop.path()).c_str());
  int control = ::open("/dev/loop-control", O_RDWR);
  if (control >= 0) {
    ::ioctl(control, LOOP_CTL_REMOVE, std::stoi(loop.name().substr(4)));
    ::close(control);
  }
}

// The counters hold the device's stat file open; once the device is gone the kernel refuses to
// read it, and the device is left out instead of repeating its last totals.
TEST_CASE("device_counters_count_a_loop_device_and_leave_it_out_once_removed") {
  LoopDevice loop(kDeviceBytes);
  const uint32_t dev = DevOf(loop);
  DeviceCounters counters;
  counters.Watch({dev});
  std::vector<uint64_t> offsets = Offsets();
  DoDirectIo(loop, offsets, /*write=*/false);
  std::map<uint32_t, IoCounts> got = counters.Read();
  REQUIRE(got.count(dev));
  CHECK(got[dev].reads >= offsets.size());  // udev may read the new device too
  CHECK(got[dev].read_bytes >= offsets.size() * kBlock);
  RemoveLoopDevice(loop);
  CHECK(counters.Read().empty());
}

// The recording re-reads its devices on the kernel's device events (not every interval): the
// removal of the recorded device must still end it at the next interval, not at the periodic
// rescan (kRescanEveryNs, longer than this recording).
TEST_CASE("recording_stops_when_its_device_is_removed") {
  LoopDevice loop(kDeviceBytes);
  LoopRecording rec = StartRecording(loop, 0.25, 20, "loop-gone");
  std::atomic<bool> stop{false};
  std::thread remove([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    RemoveLoopDevice(loop);
  });
  REQUIRE(rec.recorder->Run(*rec.sink, stop).ok());
  remove.join();
  // before the duration (20 s), which ends before the first periodic rescan (30 s)
  CHECK(rec.recorder->stop_reason() == "device " + loop.name() + " disappeared");
  fs::remove(rec.file);
}

}  // namespace
}  // namespace ntprof::agent
