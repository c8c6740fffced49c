// One opened (not yet loaded) BPF object of the agent behind one interface, so the engine does not
// care which skeleton it drives. Which object a role and transport open is their row's choice
// (transports.cpp); NTPROF_BPF_OBJECT names one there.
#pragma once

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ntprof_sampler.h"

namespace ntprof::agent {

class BpfObjectHandle {
 public:
  virtual ~BpfObjectHandle() = default;
  virtual struct bpf_object* object() = 0;
  // Loads the object (bpf_object__load) and maps its data sections in place of the buffers they
  // were opened with, as a skeleton's load does: the sampling switch and the in-flight count are
  // then the kernel's. 0 or a negative errno.
  virtual int Load() = 0;
  // Read-only config of the recording (the fleet's salt); only before load. The rate is the
  // sampling switch's, set after the hooks are attached (AgentEngine::SetSampleRate).
  virtual void SetSalt(uint64_t salt) = 0;
  // The sampling switch and the count of sampled commands in flight (ntprof_bpf_common.h), in the
  // object's own mmapped data sections: read and written in place, only after load.
  virtual ntprof_sampling_switch* SamplingSwitch() = 0;
  virtual const int64_t* SampledInFlight() = 0;
  // Addresses of the kernel's vmemmap_base and page_offset_base (0 = unknown); only before load.
  virtual void SetPageBases(uint64_t vmemmap_base_addr, uint64_t page_offset_base_addr) = 0;
  virtual const char* name() const = 0;
};

// Opens one BPF object. btf_path: external kernel BTF for CO-RE ("" = the running kernel's).
using OpenBpfObjectFn = absl::StatusOr<std::unique_ptr<BpfObjectHandle>> (*)(
    const std::string& btf_path);

// Every ntprof skeleton has the same rodata (ntprof_bpf_common.h), so one template drives them.
template <class Skel, Skel* (*OpenOpts)(const struct bpf_object_open_opts*),
          int (*LoadSkel)(Skel*), void (*Destroy)(Skel*)>
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
  int Load() override { return LoadSkel(skel_); }
  void SetSalt(uint64_t salt) override { skel_->rodata->salt_key = ntprof_salt_key(salt); }
  ntprof_sampling_switch* SamplingSwitch() override {
    return &skel_->data_ntprof_switch->ntprof_switch;
  }
  const int64_t* SampledInFlight() override {
    return reinterpret_cast<const int64_t*>(&skel_->data_ntprof_in_flight->ntprof_sampled_in_flight);
  }
  void SetPageBases(uint64_t vmemmap_base_addr, uint64_t page_offset_base_addr) override {
    skel_->rodata->vmemmap_base_addr = vmemmap_base_addr;
    skel_->rodata->page_offset_base_addr = page_offset_base_addr;
  }
  const char* name() const override { return name_; }

 private:
  Skel* skel_;
  const char* name_;
};

}  // namespace ntprof::agent

// The opener of the skeleton bpf/NAME.bpf.c (include "NAME.skel.h" first), as an OpenBpfObjectFn.
#define NTPROF_BPF_OBJECT(NAME)                                                        \
  [](const std::string& btf_path) {                                                    \
    return ::ntprof::agent::Skeleton<NAME, NAME##__open_opts, NAME##__load,               \
                                     NAME##__destroy>::Open(#NAME, btf_path);             \
  }
