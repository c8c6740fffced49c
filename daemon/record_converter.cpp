#include "record_converter.h"

#include "block_devices.h"
#include "transports.h"
#include "wire_format.h"

namespace ntprof::agent {

std::shared_ptr<const EncodedIdentity> EncodeIdentity(const RecordIdentity& id,
                                                      const std::string& agent) {
  auto encoded = std::make_shared<EncodedIdentity>();
  encoded->identity = id;
  encoded->agent = agent;
  encoded->message.set_subsys_nqn(id.subsys_nqn);
  encoded->message.set_cntlid(id.cntlid);
  encoded->message.set_device(id.device);
  encoded->message.set_agent(agent);
  AppendLengthDelimited(v1::RecordBatch::kIdentitiesFieldNumber,
                        encoded->message.SerializeAsString(), &encoded->field);
  return encoded;
}

void ConvertRecord(const ntprof_record& rec, const EncodedIdentity& id, v1::Record* out) {
  RecordFromRaw(rec, id.message, out);
}

bool MissesCoreStamp(const ntprof_record& rec) {
  if (!IsReadOrWrite(rec.opcode)) return false;  // flush etc.: no data path
  auto missing = [&](std::initializer_list<int> idx) {
    for (int i : idx) {
      if (!rec.stamps[i]) return true;
    }
    return false;
  };
  if (rec.transport == NTPROF_TRANSPORT_LOCAL)
    return missing({NTPROF_H0_BLOCK_START, NTPROF_H1_DRIVER_SUBMIT, NTPROF_H5_BLOCK_DONE});
  if (rec.role == NTPROF_ROLE_TARGET)
    return missing({NTPROF_T0_CAPSULE_RECEIVED, NTPROF_T1_REQ_INIT, NTPROF_T2_BACKEND_SUBMIT,
                    NTPROF_T3_BACKEND_DONE, NTPROF_T4_RESPOND, NTPROF_T5_REPLY_SENT});
  return missing({NTPROF_H0_BLOCK_START, NTPROF_H1_DRIVER_SUBMIT, NTPROF_H2_CAPSULE_SENT,
                  NTPROF_H3_REPLY_RECEIVED, NTPROF_H4_DRIVER_DONE, NTPROF_H5_BLOCK_DONE});
}

IdentityResolver::IdentityResolver(const SessionOptions& options, const AgentEngine* engine,
                                   std::string agent)
    : options_(options), engine_(engine), agent_(std::move(agent)) {
  const TransportRow* row = FindTransport(options.transport);
  fabric_ = row && !row->local_device;
}

void IdentityResolver::Refresh() {
  resolved_.clear();
  last_ = nullptr;
  if (!fabric_) return;
  if (options_.role == Role::kHost) {
    host_view_ = ReadNvmeHostView();
  } else if (engine_) {
    subsys_names_ = engine_->ReadSubsystemNames();
  }
}

std::string IdentityResolver::DeviceName(uint32_t kernel_dev) {
  if (!kernel_dev) return "";
  if (const NvmeNamespaceDevice* ns = host_view_.FindDevice(kernel_dev)) return ns->name;
  auto it = device_names_.find(kernel_dev);
  if (it != device_names_.end()) return it->second;
  std::string name = BlockDeviceName(kernel_dev);
  device_names_[kernel_dev] = name;
  return name;
}

const std::shared_ptr<const EncodedIdentity>& IdentityResolver::Resolve(
    const ntprof_record& rec) {
  const Names names{rec.dev, rec.ctrl, rec.subsys, rec.role};
  if (last_ && last_->first == names) return last_->second;
  if (auto it = resolved_.find(names); it != resolved_.end()) {
    last_ = &*it;
    return it->second;
  }
  bool found = true;
  RecordIdentity id = Lookup(rec, &found);  // may Refresh
  auto encoded = EncodeIdentity(id, agent_);
  if (!found) {  // not kept: the next record looks again
    unresolved_ = std::move(encoded);
    return unresolved_;
  }
  last_ = &*resolved_.emplace(names, std::move(encoded)).first;
  return last_->second;
}

RecordIdentity IdentityResolver::Lookup(const ntprof_record& rec, bool* found) {
  RecordIdentity id;
  id.device = DeviceName(rec.dev);
  if (!fabric_) return id;
  if (rec.role == NTPROF_ROLE_HOST) {
    auto c = host_view_.controllers.find(static_cast<int>(rec.ctrl));
    if (c == host_view_.controllers.end()) {
      Refresh();  // a controller we have not seen yet (just connected)
      c = host_view_.controllers.find(static_cast<int>(rec.ctrl));
    }
    if (c != host_view_.controllers.end()) {
      id.subsys_nqn = c->second.subsysnqn;
      id.cntlid = c->second.cntlid;
    } else {
      *found = false;
    }
    return id;
  }
  id.cntlid = rec.ctrl;
  auto s = subsys_names_.find(rec.subsys);
  if (s == subsys_names_.end()) {
    Refresh();
    s = subsys_names_.find(rec.subsys);
  }
  if (s != subsys_names_.end()) {
    id.subsys_nqn = s->second;
  } else {
    *found = false;
  }
  return id;
}

}  // namespace ntprof::agent
