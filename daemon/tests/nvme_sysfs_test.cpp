#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "block_devices.h"
#include "nvme_sysfs.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

// A fake /sys with one NVMe/TCP controller (native multipath: path device nvme0c0n1) and one
// PCIe controller, plus a fake configfs with two nvmet ports.
struct FakeSysfs {
  fs::path root = fs::temp_directory_path() / ("ntprof-sysfs-" + std::to_string(::getpid()));
  FakeSysfs() {
    fs::remove_all(root);
    Write("class/nvme/nvme0/transport", "tcp");
    Write("class/nvme/nvme0/subsysnqn", "nqn.2024-01.io.testbed:nullb0");
    Write("class/nvme/nvme0/cntlid", "3");
    Write("class/nvme/nvme0/state", "live");
    Write("class/nvme/nvme0/address", "traddr=192.168.100.1,trsvcid=4420,src_addr=192.168.100.2");
    Write("class/nvme/nvme0/nvme0c0n1/nsid", "1");  // hidden path: no dev file
    Write("class/block/nvme0n1/dev", "259:1");
    Write("class/nvme/nvme1/transport", "pcie");
    Write("class/nvme/nvme1/address", "0000:00:04.0");
    Write("class/nvme/nvme1/nvme1n1/dev", "259:0");
    Write("dev/block/259:1/uevent", "MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1\nDEVTYPE=disk\n");
    Write("cfg/nvmet/ports/1/addr_trtype", "tcp");
    Write("cfg/nvmet/ports/1/addr_trsvcid", "4420");
    Write("cfg/nvmet/ports/2/addr_trtype", "rdma");
    Write("cfg/nvmet/ports/2/addr_trsvcid", "4421");
    Write("cfg/nvmet/ports/3/addr_trtype", "tcp");
    Write("cfg/nvmet/ports/3/addr_trsvcid", "8009");
  }
  ~FakeSysfs() { fs::remove_all(root); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text << "\n";
  }
};

TEST_CASE("host_view_maps_multipath_paths_to_their_namespace_head") {
  FakeSysfs sys;
  NvmeHostView view = ReadNvmeHostView(sys.root.string());
  REQUIRE(view.controllers.size() == 2);
  const NvmeController& c = view.controllers.at(0);
  CHECK(c.transport == "tcp");
  CHECK(c.subsysnqn == "nqn.2024-01.io.testbed:nullb0");
  CHECK(c.cntlid == 3);

  CHECK(view.DevicesOn("tcp", "") == std::vector<uint32_t>{KernelDev(259, 1)});
  CHECK(view.DevicesOn("tcp", "nvme0n1") == std::vector<uint32_t>{KernelDev(259, 1)});
  CHECK(view.DevicesOn("tcp", "nvme1n1").empty());  // a PCIe namespace is not NVMe/TCP
  const NvmeNamespaceDevice* ns = view.FindDevice(KernelDev(259, 1));
  REQUIRE(ns);
  CHECK(ns->name == "nvme0n1");
  CHECK(ns->sysfs_name == "nvme0c0n1");
  CHECK(BlockDeviceName(KernelDev(259, 1), sys.root.string()) == "nvme0n1");
  CHECK(BlockDeviceName(KernelDev(259, 9), sys.root.string()) == "259:9");
}

TEST_CASE("a_namespace_may_be_named_by_its_device_path_or_a_link_to_it") {
  FakeSysfs sys;
  NvmeHostView view = ReadNvmeHostView(sys.root.string());
  sys.Write("dev/nvme0n1", "");  // a device node stand-in, for the link to resolve to
  fs::create_directories(sys.root / "dev/disk/by-id");
  fs::create_symlink("../../nvme0n1", sys.root / "dev/disk/by-id/nvme-Linux_ed3ab27a-1");

  // what `nvme list` prints, with no such file on this machine: its name is taken as it is
  CHECK(view.DevicesOn("tcp", "/dev/nvme0n1") == std::vector<uint32_t>{KernelDev(259, 1)});
  CHECK(view.DevicesOn("tcp", (sys.root / "dev/disk/by-id/nvme-Linux_ed3ab27a-1").string()) ==
        std::vector<uint32_t>{KernelDev(259, 1)});
  CHECK(view.DevicesOn("tcp", "/dev/nvme1n1").empty());
  CHECK(NamespaceDeviceName("nvme0n1") == "nvme0n1");
}

TEST_CASE("kernel_dev_encoding_matches_the_kernel") {
  CHECK(KernelDev(7, 3) == ((7u << 20) | 3u));
  CHECK(ParseMajorMinor("259:12\n") == KernelDev(259, 12));
  CHECK_FALSE(ParseMajorMinor("259").has_value());
  CHECK(NamespaceHeadName("nvme2c5n3") == "nvme2n3");
  CHECK(NamespaceHeadName("nvme0n1") == "nvme0n1");
}

TEST_CASE("nvme_device_names_parse_into_their_parts") {
  auto ctrl = ParseNvmeDeviceName("nvme12");
  REQUIRE(ctrl);
  CHECK(ctrl->instance == 12);
  CHECK_FALSE(ctrl->path_controller);
  CHECK_FALSE(ctrl->ns);
  auto ns = ParseNvmeDeviceName("nvme0n3");
  REQUIRE(ns);
  CHECK(ns->instance == 0);
  CHECK(ns->ns == 3);
  CHECK_FALSE(ns->path_controller);
  auto path = ParseNvmeDeviceName("nvme2c15n7");
  REQUIRE(path);
  CHECK(path->instance == 2);
  CHECK(path->path_controller == 15);
  CHECK(path->ns == 7);
  // what a controller's directory and /sys/class/nvme also hold
  for (const char* other : {"nvme", "nvme-fabrics", "nvme0c1", "nvme0n", "nvme0n1p1", "nvmex",
                            "power", "subsysnqn", "nvme0n1 ", "nvme12345678901"})
    CHECK_FALSE(ParseNvmeDeviceName(other));
}

}  // namespace
}  // namespace ntprof::agent
