// Writes synthetic recordings for the command-line tests: DIR/base (the tutorial's figures),
// DIR/slow (storage +40 us), DIR/rate100 (a target file sampled 1 in 100), DIR/hostonly (a host
// file alone, network +500 us) and DIR/idle (the base run's 1 s of I/O in a 10 s recording, with
// the device's counters), DIR/transient (3 s of 4 KiB reads and 16 KiB writes with storage 400 us
// slower from 1.5 s to 1.7 s: the HTML report's timeline and the README's screenshot) and the
// regression gate's DIR/gate-base, DIR/gate-up15 and DIR/gate-up5: 20,000 reads each, storage drawn
// from one log-normal distribution (latency_draws.h), every quantile of it 15 % and 5 % higher in
// the last two.
#include <filesystem>
#include <iostream>
#include <tuple>

#include "latency_draws.h"
#include "recording_writer.h"

using namespace ntprof::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_recordings DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (const char* sub : {"base", "slow", "rate100", "hostonly", "idle", "transient", "gate-base",
                          "gate-up15", "gate-up5"}) {
    std::filesystem::create_directories(dir / sub);
  }
  auto timing = [](uint64_t extra_storage, uint64_t extra_network = 0) {
    return [extra_storage, extra_network](int i) {
      return CommandTiming{300, 800, 470, 200,
                           ((i / 2) % 2 == 0 ? 5'000u : 15'000u) + extra_network, 200, 300,
                           (i % 2 == 0 ? 50'000u : 70'000u) + extra_storage, 210, 300};
    };
  };
  WriteRun((dir / "base/host.ntp").string(), (dir / "base/target.ntp").string(), RunSpec{}, timing(0));
  WriteRun((dir / "slow/host.ntp").string(), (dir / "slow/target.ntp").string(), RunSpec{}, timing(40'000));
  WriteRun("", (dir / "rate100/target.ntp").string(), RunSpec{.sample_rate = 100}, timing(0));
  WriteRun((dir / "hostonly/host.ntp").string(), "", RunSpec{}, timing(0, 500'000));
  WriteRun((dir / "idle/host.ntp").string(), (dir / "idle/target.ntp").string(),
           RunSpec{.commands = 1000, .span_ns = 10'000'000'000, .device_counters = true}, timing(0));
  WriteRun((dir / "transient/host.ntp").string(), (dir / "transient/target.ntp").string(),
           RunSpec{.commands = 3000, .span_ns = 3'100'000'000},
           [&](int i) {
             CommandTiming t = timing(0)(i);
             t.storage += static_cast<uint64_t>(i * 37 % 11) * 1'000;  // some spread
             if (i >= 1500 && i < 1700) t.storage += 400'000;
             return t;
           },
           [](int i) {
             const bool write = i % 4 == 3;
             return CommandId{.cid = static_cast<uint32_t>(i % 64),
                              .opcode = write ? 0x01u : 0x02u,
                              .slba = static_cast<uint64_t>(i) * 32,
                              .nlb = write ? 31u : 7u,
                              .bytes = write ? 16384u : 4096u};
           });
  for (const auto& [sub, seed, scale] : {std::tuple{"gate-base", 1, 1.0}, {"gate-up15", 2, 1.15},
                                          {"gate-up5", 3, 1.05}}) {
    StorageDraws draws(static_cast<uint64_t>(seed));
    const std::vector<int64_t> storage = draws.Take(20'000, scale);
    WriteRun((dir / sub / "host.ntp").string(), (dir / sub / "target.ntp").string(),
             RunSpec{.commands = 20'000, .span_ns = 20'000'000'000}, [&](int i) {
               CommandTiming t = timing(0)(i);
               t.storage = static_cast<uint64_t>(storage[static_cast<size_t>(i)]);
               return t;
             });
  }
  return 0;
}
