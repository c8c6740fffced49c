// Where the target's T2 comes from per namespace (nvmet_backends.h). The disks are this machine's
// real ones, read through its real /sys (a node of their numbers is made in a temporary
// directory): loop devices are blk-mq, zram is bio-based. nvmet's
// configfs is a directory tree written here: this machine has no nvmet module (the test bed's
// target runs the real one, tests/testbed/bio_backend_scenario.sh).
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "nvmet_backends.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

// A block special file in `dir` for the first disk sysfs lists as NAME* (loop0, zram0): the
// machine's /dev may lack the node (loop devices come and go), sysfs has the disk. Empty when there
// is no such disk or mknod is refused (not root).
std::string DiskNode(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator("/sys/block", ec)) {
    const std::string name = d.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::ifstream in(d.path() / "dev");
    unsigned major_number = 0, minor_number = 0;
    char colon = 0;
    if (!(in >> major_number >> colon >> minor_number)) continue;
    fs::create_directories(dir);
    const std::string node = (dir / name).string();
    if (::mknod(node.c_str(), S_IFBLK | 0600, makedev(major_number, minor_number)) != 0) return "";
    return node;
  }
  return "";
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
  TempTree t;
  const std::string loop = DiskNode(t.root / "dev", "loop");
  if (loop.empty()) {
    WARN("no loop device in /sys/block, or mknod refused (not root): nothing to classify");
    return;
  }
  std::string why;
  CHECK(ClassifyBackingDevice(loop, "/sys", &why) == NamespaceBackend::kRequestBased);
  CHECK(why == "blk-mq, iostats on");
}

TEST_CASE("a bio-based disk (zram) needs block_bio_queue for T2", "[nvmet_backends]") {
  TempTree t;
  const std::string zram = DiskNode(t.root / "dev", "zram");
  if (zram.empty()) {
    WARN("no zram disk in /sys/block, or mknod refused: no bio-based disk to classify");
    return;
  }
  std::string why;
  CHECK(ClassifyBackingDevice(zram, "/sys", &why) == NamespaceBackend::kNeedsBioQueue);
  CHECK(why.find("bio-based (zram") == 0);
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
  // A sysfs copy where a block node's numbers are a partition of a disk whose iostats are off.
  TempTree sys;
  const std::string node = (sys.root / "part1-node").string();
  if (::mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 250)) != 0) {
    WARN("mknod refused (not root)");
    return;
  }
  sys.Write("block/disk/mq/0/cpu_list", "0");
  sys.Write("block/disk/queue/iostats", "0");
  sys.Write("block/disk/part1/partition", "1");
  fs::create_directories(sys.root / "dev/block");
  fs::create_symlink(sys.root / "block/disk/part1", sys.root / "dev/block/7:250");
  std::string why;
  CHECK(ClassifyBackingDevice(node, sys.root.string(), &why) == NamespaceBackend::kNeedsBioQueue);
  CHECK(why.find("iostats off") != std::string::npos);
  sys.Write("block/disk/queue/iostats", "1");
  CHECK(ClassifyBackingDevice(node, sys.root.string(), &why) == NamespaceBackend::kRequestBased);
}

TEST_CASE("block_bio_queue is needed exactly while an enabled namespace needs it",
          "[nvmet_backends]") {
  TempTree cfg;
  const std::string loop = DiskNode(cfg.root / "dev", "loop");
  if (loop.empty()) {
    WARN("no loop device in /sys/block, or mknod refused");
    return;
  }
  SECTION("nvmet's configfs cannot be read: nothing is known, attach it") {
    NvmetBackends b = ReadNvmetBackends(cfg.root.string(), "/sys");
    CHECK_FALSE(b.configfs_readable);
    CHECK(b.NeedsBioQueue());
    CHECK(b.BioQueueReasons().front().find("cannot be read") != std::string::npos);
  }
  SECTION("request-based and file namespaces only") {
    cfg.Write("image", "data");
    cfg.Namespace("nqn.a", 1, loop, true);
    cfg.Namespace("nqn.a", 2, (cfg.root / "image").string(), true);
    cfg.Namespace("nqn.b", 1, (cfg.root / "gone").string(), false);  // disabled: no I/O
    NvmetBackends b = ReadNvmetBackends(cfg.root.string(), "/sys");
    CHECK(b.configfs_readable);
    CHECK(b.namespaces.size() == 2);
    CHECK_FALSE(b.NeedsBioQueue());
    nlohmann::json j = b.ToJson();  // what `ntprofd probe --role target --json` shows as "t2"
    CHECK(j["block_bio_queue_needed"] == false);
    CHECK(j["namespaces"][0]["t2_from"] == "request");
    CHECK(j["namespaces"][1]["t2_from"] == "nvmet_file_execute_rw");
    CHECK(b.ToText().find("nsid 1 " + loop + ": blk-mq, iostats on -> from the request") !=
          std::string::npos);
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
