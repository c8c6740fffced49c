// libcheck.cpp - selftest.sh builds this on the build machine and starts it in both VMs from
// /mnt/host: proves that a program linked like ntprofd (grpc++, protobuf, libbpf, spdlog) finds all
// its libraries in the guest image and can make a BPF syscall there.
#include <grpcpp/grpcpp.h>
#include <google/protobuf/timestamp.pb.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
int main() {
  utsname u; uname(&u);
  google::protobuf::Timestamp ts; ts.set_seconds(42);
  auto ch = grpc::CreateChannel("10.0.2.2:1", grpc::InsecureChannelCredentials());
  // a real BPF syscall: create and free an array map
  int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tbcheck", 4, 8, 1, nullptr);
  spdlog::info("libcheck on {} {}: grpc {} protobuf ts={} libbpf {}.{} map_fd={} channel={}",
               u.nodename, u.release, grpc::Version(), ts.seconds(), libbpf_major_version(),
               libbpf_minor_version(), fd, ch ? "ok" : "null");
  return fd >= 0 ? 0 : 1;
}
