#include "record_converter.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>

#include "block_devices.h"
#include "transports.h"
#include "wire_format.h"

namespace ntprof::agent {

int StampCount(uint8_t role) {
  return role == NTPROF_ROLE_TARGET ? NTPROF_TARGET_STAMPS : NTPROF_HOST_STAMPS;
}

namespace {

using google::protobuf::io::CodedOutputStream;

using R = v1::Record;

uint8_t* PutVarintField(uint32_t field, uint64_t value, uint8_t* p) {
  if (value == 0) return p;  // proto3: a zero is not on the wire
  p = CodedOutputStream::WriteTagToArray(field << 3 | 0 /* varint */, p);
  return CodedOutputStream::WriteVarint64ToArray(value, p);
}

void PutStringField(uint32_t field, const std::string& value, std::string* out) {
  if (!value.empty()) AppendLengthDelimited(field, value, out);  // proto3: "" is not on the wire
}

uint8_t* PutBytes(const std::string& bytes, uint8_t* p) {
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

}  // namespace

std::shared_ptr<const EncodedIdentity> EncodeIdentity(const RecordIdentity& id,
                                                      const std::string& agent) {
  auto encoded = std::make_shared<EncodedIdentity>();
  encoded->identity = id;
  encoded->agent = agent;
  PutStringField(R::kSubsysNqnFieldNumber, id.subsys_nqn, &encoded->nqn_cntlid_field);
  uint8_t cntlid[16];
  encoded->nqn_cntlid_field.append(
      reinterpret_cast<const char*>(cntlid),
      PutVarintField(R::kCntlidFieldNumber, id.cntlid, cntlid) - cntlid);
  PutStringField(R::kDeviceFieldNumber, id.device, &encoded->device_field);
  PutStringField(R::kAgentFieldNumber, agent, &encoded->agent_field);
  return encoded;
}

void EncodeRecord(const ntprof_record& rec, const EncodedIdentity& id, std::string* out) {
  // The fields in field-number order, as protobuf writes them (the same bytes), straight into
  // out: room for every varint field at its longest (tag 2 bytes, value 10), the stamps' and the
  // identity's, then cut to what was written.
  constexpr size_t kMaxVarintFields = 12 * 12 + 2 + 5 + NTPROF_MAX_STAMPS * 10;
  const size_t start = out->size();
  out->resize(start + kMaxVarintFields + id.nqn_cntlid_field.size() + id.device_field.size() +
              id.agent_field.size());
  uint8_t* p = reinterpret_cast<uint8_t*>(out->data()) + start;
  uint8_t* const begin = p;
  // The BPF enums are the v1 values (static_asserts: record_layout.cpp, transports.cpp).
  p = PutVarintField(R::kRoleFieldNumber, rec.role, p);
  p = PutVarintField(R::kTransportFieldNumber, rec.transport, p);
  p = PutVarintField(R::kStackFieldNumber, rec.stack, p);
  p = PutVarintField(R::kOpcodeFieldNumber, rec.opcode, p);
  p = PutVarintField(R::kNsidFieldNumber, rec.nsid, p);
  p = PutVarintField(R::kSlbaFieldNumber, rec.slba, p);
  p = PutVarintField(R::kNlbFieldNumber, rec.nlb, p);
  p = PutVarintField(R::kBytesFieldNumber, rec.bytes, p);
  p = PutBytes(id.nqn_cntlid_field, p);  // 9, 10
  p = PutVarintField(R::kQidFieldNumber, rec.qid, p);
  p = PutVarintField(R::kCidFieldNumber, rec.cid, p);
  p = PutVarintField(R::kFlagsFieldNumber, rec.flags, p);
  p = PutVarintField(R::kStatusFieldNumber, rec.status, p);
  p = PutBytes(id.device_field, p);  // 15
  // 16, stamps: packed, every one (a 0 is "not seen" and keeps its place). Encoded first into
  // their own buffer: their length, which goes before them, is then known without a sizing pass.
  uint8_t stamp_buf[NTPROF_MAX_STAMPS * 10];
  uint8_t* q = stamp_buf;
  const int stamps = StampCount(rec.role);
  for (int i = 0; i < stamps; ++i) q = CodedOutputStream::WriteVarint64ToArray(rec.stamps[i], q);
  p = CodedOutputStream::WriteTagToArray(R::kStampsFieldNumber << 3 | kLengthDelimited, p);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(q - stamp_buf), p);
  std::memcpy(p, stamp_buf, q - stamp_buf);
  p += q - stamp_buf;
  p = PutBytes(id.agent_field, p);  // 17
  out->resize(start + (p - begin));
}

void ConvertRecord(const ntprof_record& rec, const EncodedIdentity& id, v1::Record* out_record) {
  v1::Record& out = *out_record;
  out.set_role(static_cast<v1::Role>(rec.role));
  out.set_transport(static_cast<v1::Transport>(rec.transport));
  out.set_stack(static_cast<v1::Stack>(rec.stack));
  out.set_opcode(rec.opcode);
  out.set_nsid(rec.nsid);
  out.set_slba(rec.slba);
  out.set_nlb(rec.nlb);
  out.set_bytes(rec.bytes);
  out.set_subsys_nqn(id.identity.subsys_nqn);
  out.set_cntlid(id.identity.cntlid);
  out.set_qid(rec.qid);
  out.set_cid(rec.cid);
  out.set_flags(rec.flags);
  out.set_status(rec.status);
  out.set_device(id.identity.device);
  out.mutable_stamps()->Add(rec.stamps, rec.stamps + StampCount(rec.role));
  out.set_agent(id.agent);
}

bool MissesCoreStamp(const ntprof_record& rec) {
  if (rec.opcode != 0x01 && rec.opcode != 0x02) return false;  // flush etc.: no data path
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
