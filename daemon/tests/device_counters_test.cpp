// DeviceCounters on a fake /sys whose stat files the test writes: the counts are the known
// differences between two writes. (A removed device is left out: loop_device_test, on a real one,
// since what a removed device's sysfs file returns is the kernel's doing.)
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "block_devices.h"
#include "device_counters.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

// /sys/block/DEV/stat: reads, read merges, sectors read, ms reading, writes, write merges,
// sectors written, ... (11 to 17 fields depending on the kernel).
std::string Stat(uint64_t reads, uint64_t sectors_read, uint64_t writes, uint64_t sectors_written) {
  return std::to_string(reads) + " 0 " + std::to_string(sectors_read) + " 7 " +
         std::to_string(writes) + " 0 " + std::to_string(sectors_written) + " 9 0 12 16 0 0 0 0";
}

struct FakeSysfs {
  fs::path root = fs::temp_directory_path() / ("ntprof-stat-" + std::to_string(::getpid()));
  FakeSysfs() {
    fs::remove_all(root);
    // a multipath head (no statistics of its own on Linux 6.1) with two paths, and a loop device
    Write("dev/block/259:1/uevent", "MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1\nDEVTYPE=disk");
    Write("dev/block/259:1/stat", Stat(0, 0, 0, 0));
    Write("block/nvme0c0n1/stat", Stat(100, 800, 10, 80));
    Write("block/nvme0c1n1/stat", Stat(50, 400, 5, 40));
    Write("block/nvme0c0n2/stat", Stat(999, 9999, 999, 9999));  // another namespace's path
    Write("dev/block/7:0/uevent", "MAJOR=7\nMINOR=0\nDEVNAME=loop0\nDEVTYPE=disk");
    Write("dev/block/7:0/stat", Stat(3, 24, 4, 32));
  }
  ~FakeSysfs() { fs::remove_all(root); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text << "\n";
  }
};

const uint32_t kHead = KernelDev(259, 1);
const uint32_t kLoop = KernelDev(7, 0);

TEST_CASE("a_multipath_head_counts_what_its_paths_completed_since_the_last_read") {
  FakeSysfs sys;
  DeviceCounters counters(sys.root.string());
  counters.Watch({kHead});
  sys.Write("block/nvme0c0n1/stat", Stat(130, 1040, 12, 96));
  sys.Write("block/nvme0c1n1/stat", Stat(60, 480, 5, 40));
  auto got = counters.Read();
  REQUIRE(got.count(kHead));
  CHECK(got[kHead].reads == 40);
  CHECK(got[kHead].read_bytes == 320 * 512);
  CHECK(got[kHead].writes == 2);
  CHECK(got[kHead].write_bytes == 16 * 512);
  // The next read counts from this one.
  sys.Write("block/nvme0c1n1/stat", Stat(61, 488, 5, 40));
  got = counters.Read();
  CHECK(got[kHead].reads == 1);
  CHECK(got[kHead].read_bytes == 8 * 512);
  CHECK(got[kHead].writes == 0);
}

TEST_CASE("a_device_without_paths_counts_its_own_statistics_and_only_watched_ones_are_read") {
  FakeSysfs sys;
  DeviceCounters counters(sys.root.string());
  counters.Watch({kLoop});
  sys.Write("dev/block/7:0/stat", Stat(5, 40, 4, 32));
  auto got = counters.Read();
  CHECK(got.count(kHead) == 0);
  REQUIRE(got.count(kLoop));
  CHECK(got[kLoop].reads == 2);
  CHECK(got[kLoop].read_bytes == 16 * 512);
  CHECK(got[kLoop].writes == 0);
  counters.Watch({});  // no longer watched: no longer reported
  CHECK(counters.Read().empty());
}

}  // namespace
}  // namespace ntprof::agent
