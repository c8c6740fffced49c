#include "raw_records.h"

#include <bit>
#include <cstddef>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ntprof {

// The wire layout is the agent's memory layout, which is little-endian (x86-64, arm64).
static_assert(std::endian::native == std::endian::little,
              "raw records are read in place; a big-endian reader needs byte swaps here");
// Layout NTPROF_RECORD_LAYOUT, as BPF writes it and readers take it off the wire: a change here
// is a new layout number (bpf/ntprof_record.h).
static_assert(sizeof(ntprof_record) == NTPROF_RECORD_SIZE, "ntprof_record size changed");
static_assert(offsetof(ntprof_record, stamps) == 0);
static_assert(offsetof(ntprof_record, slba) == 128);
static_assert(offsetof(ntprof_record, nsid) == 136);
static_assert(offsetof(ntprof_record, nlb) == 140);
static_assert(offsetof(ntprof_record, bytes) == 144);
static_assert(offsetof(ntprof_record, ctrl) == 148);
static_assert(offsetof(ntprof_record, dev) == 152);
static_assert(offsetof(ntprof_record, flags) == 156);
static_assert(offsetof(ntprof_record, qid) == 160);
static_assert(offsetof(ntprof_record, cid) == 162);
static_assert(offsetof(ntprof_record, status) == 164);
static_assert(offsetof(ntprof_record, opcode) == 166);
static_assert(offsetof(ntprof_record, role) == 167);
static_assert(offsetof(ntprof_record, transport) == 168);
static_assert(offsetof(ntprof_record, stack) == 169);
static_assert(offsetof(ntprof_record, pad) == 170);  // the identity's index on the wire
static_assert(offsetof(ntprof_record, subsys) == 172);
static_assert(NTPROF_HOST_STAMPS <= NTPROF_MAX_STAMPS && NTPROF_TARGET_STAMPS <= NTPROF_MAX_STAMPS);

// The record's role and stack are copied into the v1 record as they are (the transport: its
// static_asserts are beside the transport registry's rows, transports.cpp).
static_assert(int{NTPROF_ROLE_UNKNOWN} == ntprof::v1::ROLE_UNKNOWN);
static_assert(int{NTPROF_ROLE_HOST} == ntprof::v1::ROLE_HOST);
static_assert(int{NTPROF_ROLE_TARGET} == ntprof::v1::ROLE_TARGET);
static_assert(int{NTPROF_STACK_KERNEL} == ntprof::v1::STACK_KERNEL);
static_assert(int{NTPROF_STACK_SPDK} == ntprof::v1::STACK_SPDK);
static_assert(int{NTPROF_STACK_USERSPACE} == ntprof::v1::STACK_USERSPACE);

int StampCount(uint8_t role) {
  return role == NTPROF_ROLE_TARGET ? int{NTPROF_TARGET_STAMPS} : int{NTPROF_HOST_STAMPS};
}

void RecordFromRaw(const ntprof_record& raw, const v1::RecordIdentity& identity, v1::Record* out) {
  out->set_role(static_cast<v1::Role>(raw.role));
  out->set_transport(static_cast<v1::Transport>(raw.transport));
  out->set_stack(static_cast<v1::Stack>(raw.stack));
  out->set_opcode(raw.opcode);
  out->set_nsid(raw.nsid);
  out->set_slba(raw.slba);
  out->set_nlb(raw.nlb);
  out->set_bytes(raw.bytes);
  out->set_subsys_nqn(identity.subsys_nqn());
  out->set_cntlid(identity.cntlid());
  out->set_qid(raw.qid);
  out->set_cid(raw.cid);
  out->set_flags(raw.flags);
  out->set_status(raw.status);
  out->set_device(identity.device());
  out->mutable_stamps()->Add(raw.stamps, raw.stamps + StampCount(raw.role));
  out->set_agent(identity.agent());
}

ntprof_record RawFromRecord(const v1::Record& record) {
  ntprof_record raw{};
  raw.role = static_cast<uint8_t>(record.role());
  raw.transport = static_cast<uint8_t>(record.transport());
  raw.stack = static_cast<uint8_t>(record.stack());
  raw.opcode = static_cast<uint8_t>(record.opcode());
  raw.nsid = record.nsid();
  raw.slba = record.slba();
  raw.nlb = record.nlb();
  raw.bytes = record.bytes();
  raw.qid = static_cast<uint16_t>(record.qid());
  raw.cid = static_cast<uint16_t>(record.cid());
  raw.flags = record.flags();
  raw.status = static_cast<uint16_t>(record.status());
  for (int i = 0; i < record.stamps_size() && i < NTPROF_MAX_STAMPS; ++i)
    raw.stamps[i] = record.stamps(i);
  return raw;
}

absl::Status ExpandRawRecords(v1::RecordBatch* batch) {
  if (batch->raw_layout() == 0 && batch->raw_records().empty()) return absl::OkStatus();
  if (batch->raw_layout() == 0)
    return absl::DataLossError("raw records without a layout (a corrupt batch)");
  if (batch->raw_layout() != NTPROF_RECORD_LAYOUT) {
    return absl::FailedPreconditionError(
        absl::StrCat("records in layout ", batch->raw_layout(), ", which this build does not read (",
                     "it reads layout ", NTPROF_RECORD_LAYOUT,
                     "): the agent is newer; upgrade the collector and ntprofctl"));
  }
  const std::string& bytes = batch->raw_records();
  if (bytes.size() % sizeof(ntprof_record) != 0) {
    return absl::DataLossError(absl::StrCat("raw records of ", bytes.size(),
                                            " bytes are no whole number of ",
                                            sizeof(ntprof_record), "-byte records"));
  }
  const size_t count = bytes.size() / sizeof(ntprof_record);
  for (size_t i = 0; i < count; ++i) {
    uint16_t identity;
    std::memcpy(&identity, bytes.data() + i * sizeof(ntprof_record) + offsetof(ntprof_record, pad),
                sizeof identity);
    if (identity >= batch->identities_size()) {
      return absl::DataLossError(absl::StrCat("raw record ", i, " names identity ", identity,
                                              " of a batch that has ", batch->identities_size()));
    }
  }
  batch->mutable_records()->Reserve(batch->records_size() + static_cast<int>(count));
  for (size_t i = 0; i < count; ++i) {
    ntprof_record raw;
    std::memcpy(&raw, bytes.data() + i * sizeof(ntprof_record), sizeof raw);
    RecordFromRaw(raw, batch->identities(raw.pad), batch->add_records());
  }
  batch->clear_raw_records();
  batch->clear_identities();
  batch->clear_raw_layout();
  return absl::OkStatus();
}

}  // namespace ntprof
