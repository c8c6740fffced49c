// struct ntprof_record (what BPF saw) -> ntprof::v1::Record (what leaves the machine), with the
// identity the kernel side cannot know: subsystem NQN, cntlid of a host controller, device names.
#pragma once

#include <map>
#include <string>

#include "agent_engine.h"
#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"
#include "nvme_sysfs.h"

namespace ntprof::agent {

struct RecordIdentity {
  std::string subsys_nqn;
  uint32_t cntlid = 0;
  std::string device;
};

// Fills out, a fresh record (typically added in place to a batch on the batch's arena: building
// it elsewhere and moving it in would copy it across arenas).
void ConvertRecord(const ntprof_record& rec, const RecordIdentity& id, const std::string& agent,
                   v1::Record* out);

// Number of stamps a record of this role carries (the length of Record.stamps).
int StampCount(uint8_t role);

// True when a read or write record lacks one of the stage boundaries its transport defines
// (host TCP: H0-H5, target TCP: T0-T5, local: H0, H1, H5). Counted as LossCounters.missing_stamp.
bool MissesCoreStamp(const ntprof_record& rec);

// Resolves identities for one recording role, from sysfs (host) or the subsystem map (target).
class IdentityResolver {
 public:
  IdentityResolver(const SessionOptions& options, const AgentEngine* engine);

  // Re-reads sysfs / the subsystem map (every interval, and when a record names something new).
  void Refresh();
  // Valid until the next Refresh or Resolve. What a record names (device, controller,
  // subsystem) is looked up once and kept until the next Refresh: copying the NQN and device name
  // out for every record cost more than converting it.
  const RecordIdentity& Resolve(const ntprof_record& rec);
  const NvmeHostView& host_view() const { return host_view_; }
  std::string DeviceName(uint32_t kernel_dev);

 private:
  // The fields of a record its identity depends on.
  struct Names {
    uint32_t dev, ctrl, subsys;
    uint8_t role;
    auto operator<=>(const Names&) const = default;
  };
  // Looks the names up; *found is false when a fabric record's controller or subsystem is still
  // unknown (not kept: the next record looks again, after a Refresh).
  RecordIdentity Lookup(const ntprof_record& rec, bool* found);

  SessionOptions options_;
  bool fabric_;  // commands name a subsystem and a controller (not a local block device)
  const AgentEngine* engine_;
  NvmeHostView host_view_;
  std::map<uint32_t, std::string> subsys_names_;
  std::map<uint32_t, std::string> device_names_;
  std::map<Names, RecordIdentity> resolved_;  // since the last Refresh
  const std::pair<const Names, RecordIdentity>* last_ = nullptr;  // in resolved_
  RecordIdentity unresolved_;  // the last Resolve's when not kept
};

}  // namespace ntprof::agent
