// What a struct ntprof_record (what BPF saw) names, resolved to what the kernel side cannot know:
// subsystem NQN, cntlid of a host controller, device names. Records leave the machine as BPF
// wrote them, each with the index of its identity (core/raw_records.h); the identities travel
// beside them, encoded once each.
//
// Records are not built as messages or encoded in the agent: a message per record made the
// agent's work 2,355 instructions a record to a file, encoding each one straight into protobuf's
// wire form 1,208, of which the encoding was 424 (docs/overhead.md, "The agent's work per
// record"). Readers convert (the collector as batches arrive, NtpReader for files).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "agent_engine.h"
#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"
#include "nvme_opcode.h"
#include "raw_records.h"
#include "nvme_sysfs.h"

namespace ntprof::agent {

struct RecordIdentity {
  std::string subsys_nqn;
  uint32_t cntlid = 0;
  std::string device;
  bool operator==(const RecordIdentity&) const = default;
};

// What a record names, resolved, as RecordBatch.identities carries it: the message, and its
// bytes as the length-delimited field a batch's wire form repeats (encoded once per identity).
struct EncodedIdentity {
  RecordIdentity identity;
  std::string agent;
  v1::RecordIdentity message;
  std::string field;
};

std::shared_ptr<const EncodedIdentity> EncodeIdentity(const RecordIdentity& id,
                                                      const std::string& agent);

// The same record as a message, for what reads messages in the agent (the live summary of
// `ntprofd record`, the Agent service's Record stream).
void ConvertRecord(const ntprof_record& rec, const EncodedIdentity& id, v1::Record* out);

// True when a read or write record lacks one of the stage boundaries its transport defines
// (host TCP: H0-H5, target TCP: T0-T5, local: H0, H1, H5). Counted as LossCounters.missing_stamp.
bool MissesCoreStamp(const ntprof_record& rec);

// Resolves identities for one recording role, from sysfs (host) or the subsystem map (target).
class IdentityResolver {
 public:
  // agent: the name every record carries (ntprof.v1.Record.agent).
  IdentityResolver(const SessionOptions& options, const AgentEngine* engine, std::string agent);

  // Re-reads sysfs / the subsystem map (every interval, and when a record names something new).
  void Refresh();
  // What a record names (device, controller, subsystem) is looked up and encoded once and kept
  // until the next Refresh: a batch holds on to the identities of its records. Valid until the
  // next Resolve or Refresh.
  const std::shared_ptr<const EncodedIdentity>& Resolve(const ntprof_record& rec);
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
  std::string agent_;
  std::map<Names, std::shared_ptr<const EncodedIdentity>> resolved_;  // since the last Refresh
  const std::pair<const Names, std::shared_ptr<const EncodedIdentity>>* last_ = nullptr;
  std::shared_ptr<const EncodedIdentity> unresolved_;  // the last Resolve's when not kept
};

}  // namespace ntprof::agent
