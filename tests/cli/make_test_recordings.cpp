// Writes synthetic recordings for the command-line tests: DIR/base (the tutorial's figures),
// DIR/slow (storage +40 us) and DIR/rate100 (a target file sampled 1 in 100).
#include <filesystem>
#include <iostream>

#include "recording_writer.h"

using namespace ntprof::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_recordings DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (const char* sub : {"base", "slow", "rate100"}) std::filesystem::create_directories(dir / sub);
  auto timing = [](uint64_t extra_storage) {
    return [extra_storage](int i) {
      return CommandTiming{300, 800, 470, 200, (i / 2) % 2 == 0 ? 5'000u : 15'000u, 200, 300,
                           (i % 2 == 0 ? 50'000u : 70'000u) + extra_storage, 210, 300};
    };
  };
  WriteRun((dir / "base/host.ntp").string(), (dir / "base/target.ntp").string(), RunSpec{}, timing(0));
  WriteRun((dir / "slow/host.ntp").string(), (dir / "slow/target.ntp").string(), RunSpec{}, timing(40'000));
  WriteRun("", (dir / "rate100/target.ntp").string(), RunSpec{.sample_rate = 100}, timing(0));
  return 0;
}
