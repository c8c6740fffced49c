#include "bpf_object_handle.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "host_rdma.skel.h"
#include "host_tcp.skel.h"
#include "local_block.skel.h"
#include "target_rdma.skel.h"
#include "target_tcp.skel.h"

namespace ntprof::agent {
namespace {

// Every ntprof skeleton has the same rodata (ntprof_bpf_common.h), so one template drives them.
template <class Skel, Skel* (*OpenOpts)(const struct bpf_object_open_opts*),
          void (*Destroy)(Skel*)>
class Skeleton : public BpfObjectHandle {
 public:
  Skeleton(Skel* skel, const char* name) : skel_(skel), name_(name) {}
  ~Skeleton() override { Destroy(skel_); }

  static absl::StatusOr<std::unique_ptr<BpfObjectHandle>> Open(const char* name,
                                                               const std::string& btf_path) {
    LIBBPF_OPTS(bpf_object_open_opts, opts,
                .btf_custom_path = btf_path.empty() ? nullptr : btf_path.c_str());
    Skel* skel = OpenOpts(&opts);
    if (!skel) {
      return absl::InternalError(std::string("cannot open BPF object ") + name + ": " +
                                 std::strerror(errno));
    }
    return std::unique_ptr<BpfObjectHandle>(new Skeleton(skel, name));
  }

  struct bpf_object* object() override { return skel_->obj; }
  void SetConfig(uint32_t sample_rate, uint64_t salt) override {
    skel_->rodata->sample_rate = sample_rate;
    skel_->rodata->salt = salt;
  }
  const char* name() const override { return name_; }

 private:
  Skel* skel_;
  const char* name_;
};

using HostTcp = Skeleton<host_tcp, host_tcp__open_opts, host_tcp__destroy>;
using TargetTcp = Skeleton<target_tcp, target_tcp__open_opts, target_tcp__destroy>;
using HostRdma = Skeleton<host_rdma, host_rdma__open_opts, host_rdma__destroy>;
using TargetRdma = Skeleton<target_rdma, target_rdma__open_opts, target_rdma__destroy>;
using LocalBlock = Skeleton<local_block, local_block__open_opts, local_block__destroy>;

}  // namespace

absl::StatusOr<std::unique_ptr<BpfObjectHandle>> OpenBpfObject(Role role, Transport transport,
                                                               const std::string& btf_path) {
  if (transport == Transport::kLocal) return LocalBlock::Open("local_block", btf_path);
  if (transport == Transport::kRdma) {
    if (role == Role::kHost) return HostRdma::Open("host_rdma", btf_path);
    return TargetRdma::Open("target_rdma", btf_path);
  }
  if (role == Role::kHost) return HostTcp::Open("host_tcp", btf_path);
  return TargetTcp::Open("target_tcp", btf_path);
}

}  // namespace ntprof::agent
