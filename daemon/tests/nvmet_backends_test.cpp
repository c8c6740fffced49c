// Where the target's T2 comes from per namespace (nvmet_backends.h). The disks are this machine's
// real ones, read through its real /sys: loop devices are blk-mq, zram is bio-based. nvmet's
// configfs is a directory tree written here: this machine has no nvmet module (the test bed's
// target runs the real one, tests/testbed/bio_backend_scenario.sh).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "nvmet_backends.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

bool IsBlockDevice(const char* path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

struct TempTree {
  fs::path root = fs::temp_directory_path() / ("ntprof-nvmet-" + std::to_string(::getpid()));
  TempTree() { fs::remove_all(root); }
  ~TempTree() { fs::remove_all(root); }
  void Write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text << "\n";
  }
  // A namespace as nvmet's configfs shows it.
  void Namespace(const std::string& nqn, int nsid, const std::string& device, bool enabled) const {
    const std::string ns = "nvmet/subsystems/" + nqn + "/namespaces/" + std::to_string(nsid);
    Write(ns + "/device_path", device);
    Write(ns + "/enable", enabled ? "1" : "0");
  }
};

TEST_CASE("a loop device (blk-mq, iostats on) gives T2 from its requests", "[nvmet_backends]") {
  if (!IsBlockDevice("/dev/loop0")) {
    WARN("no /dev/loop0 on this machine: nothing to classify");
    return;
  }
  std::string why;
  CHECK(ClassifyBackingDevice("/dev/loop0", "/sys", &why) == NamespaceBackend::kRequestBased);
  CHECK(why == "blk-mq, iostats on");
}

TEST_CASE("a bio-based disk (zram) needs block_bio_queue for T2", "[nvmet_backends]") {
  if (!IsBlockDevice("/dev/zram0")) {
    WARN("no /dev/zram0 on this machine: no bio-based disk to classify");
    return;
  }
  std::string why;
  CHECK(ClassifyBackingDevice("/dev/zram0", "/sys", &why) == NamespaceBackend::kNeedsBioQueue);
  CHECK(why == "bio-based (zram0 has no mq/)");
}

TEST_CASE("files, vanished paths and non-devices are told apart", "[nvmet_backends]") {
  TempTree t;
  t.Write("image", "data");
  std::string why;
  CHECK(ClassifyBackingDevice((t.root / "image").string(), "/sys", &why) == NamespaceBackend::kFile);
  CHECK(ClassifyBackingDevice((t.root / "gone").string(), "/sys", &why) ==
        NamespaceBackend::kNeedsBioQueue);
  CHECK(why.find("cannot stat") == 0);
  CHECK(ClassifyBackingDevice("/dev/null", "/sys", &why) == NamespaceBackend::kNeedsBioQueue);
  CHECK(why == "neither a block device nor a file");
}

TEST_CASE("iostats off and partitions are read from the whole disk's queue", "[nvmet_backends]") {
  if (!IsBlockDevice("/dev/loop0")) {
    WARN("no /dev/loop0 on this machine");
    return;
  }
  // A sysfs copy where loop0 (7:0) is a partition of a disk whose iostats are off.
  TempTree sys;
  sys.Write("block/disk/mq/0/cpu_list", "0");
  sys.Write("block/disk/queue/iostats", "0");
  sys.Write("block/disk/part1/partition", "1");
  fs::create_directories(sys.root / "dev/block");
  fs::create_symlink(sys.root / "block/disk/part1", sys.root / "dev/block/7:0");
  std::string why;
  CHECK(ClassifyBackingDevice("/dev/loop0", sys.root.string(), &why) ==
        NamespaceBackend::kNeedsBioQueue);
  CHECK(why.find("iostats off") != std::string::npos);
  sys.Write("block/disk/queue/iostats", "1");
  CHECK(ClassifyBackingDevice("/dev/loop0", sys.root.string(), &why) ==
        NamespaceBackend::kRequestBased);
}

TEST_CASE("block_bio_queue is needed exactly while an enabled namespace needs it",
          "[nvmet_backends]") {
  if (!IsBlockDevice("/dev/loop0")) {
    WARN("no /dev/loop0 on this machine");
    return;
  }
  TempTree cfg;
  SECTION("nvmet's configfs cannot be read: nothing is known, attach it") {
    NvmetBackends b = ReadNvmetBackends(cfg.root.string(), "/sys");
    CHECK_FALSE(b.configfs_readable);
    CHECK(b.NeedsBioQueue());
    CHECK(b.BioQueueReasons().front().find("cannot be read") != std::string::npos);
  }
  SECTION("request-based and file namespaces only") {
    cfg.Write("image", "data");
    cfg.Namespace("nqn.a", 1, "/dev/loop0", true);
    cfg.Namespace("nqn.a", 2, (cfg.root / "image").string(), true);
    cfg.Namespace("nqn.b", 1, (cfg.root / "gone").string(), false);  // disabled: no I/O
    NvmetBackends b = ReadNvmetBackends(cfg.root.string(), "/sys");
    CHECK(b.configfs_readable);
    CHECK(b.namespaces.size() == 2);
    CHECK_FALSE(b.NeedsBioQueue());
    SECTION("then one is enabled on a disk that needs it") {
      cfg.Namespace("nqn.b", 1, (cfg.root / "gone").string(), true);
      b = ReadNvmetBackends(cfg.root.string(), "/sys");
      CHECK(b.NeedsBioQueue());
      REQUIRE(b.BioQueueReasons().size() == 1);
      CHECK(b.BioQueueReasons()[0].find("nqn.b nsid 1 (") == 0);
    }
  }
}

}  // namespace
}  // namespace ntprof::agent
