#include "spdk_event_converter.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ntprof_probe_abi.h"

namespace ntprof::agent::spdk {
namespace {

// The contract's slots are the record's stamp indices (ntprof_probe_abi.h promises it): a stamp is
// copied to the same index. Should they ever diverge, a mapping table replaces these checks.
static_assert(NTPROF_PROBE_STAMPS == NTPROF_MAX_STAMPS);
static_assert(int{NTPROF_PROBE_H1_SUBMIT} == int{NTPROF_H1_DRIVER_SUBMIT});
static_assert(int{NTPROF_PROBE_H2_CAPSULE_SENT} == int{NTPROF_H2_CAPSULE_SENT});
static_assert(int{NTPROF_PROBE_H3_REPLY_RECEIVED} == int{NTPROF_H3_REPLY_RECEIVED});
static_assert(int{NTPROF_PROBE_H4_COMPLETED} == int{NTPROF_H4_DRIVER_DONE});
static_assert(int{NTPROF_PROBE_H_RESPONSE_RECEIVED} == int{NTPROF_H_RESPONSE_RECEIVED});
static_assert(int{NTPROF_PROBE_H_R2T_RECEIVED} == int{NTPROF_H_R2T_RECEIVED});
static_assert(int{NTPROF_PROBE_H_DATA_SENT} == int{NTPROF_H_DATA_SENT});
static_assert(int{NTPROF_PROBE_T0_CAPSULE_RECEIVED} == int{NTPROF_T0_CAPSULE_RECEIVED});
static_assert(int{NTPROF_PROBE_T1_REQUEST_STARTED} == int{NTPROF_T1_REQ_INIT});
static_assert(int{NTPROF_PROBE_T2_BDEV_SUBMIT} == int{NTPROF_T2_BACKEND_SUBMIT});
static_assert(int{NTPROF_PROBE_T3_BDEV_DONE} == int{NTPROF_T3_BACKEND_DONE});
static_assert(int{NTPROF_PROBE_T4_RESPONSE_QUEUED} == int{NTPROF_T4_RESPOND});
static_assert(int{NTPROF_PROBE_T5_REPLY_SENT} == int{NTPROF_T5_REPLY_SENT});
static_assert(int{NTPROF_PROBE_T_R2T_SENT} == int{NTPROF_T_R2T_SENT});
static_assert(int{NTPROF_PROBE_T_DATA_RECEIVED} == int{NTPROF_T_DATA_RECEIVED});
static_assert(int{NTPROF_PROBE_T_XFER_POSTED} == int{NTPROF_T_XFER_POSTED});
static_assert(int{NTPROF_PROBE_T_XFER_DONE} == int{NTPROF_T_XFER_DONE});
static_assert(int{NTPROF_PROBE_T_RESPONSE_SENT} == int{NTPROF_T_RESPONSE_SENT});

bool IsTargetKind(uint32_t kind) { return kind == NTPROF_SPDK_NVMF_TCP || kind == NTPROF_SPDK_NVMF_RDMA; }
bool IsRdmaKind(uint32_t kind) { return kind == NTPROF_SPDK_NVMF_RDMA || kind == NTPROF_SPDK_NVME_RDMA; }

}  // namespace

uint64_t TicksToNs(uint64_t ticks, uint64_t hz) {
  // split so that neither product overflows: (t / hz) * 1e9 + (t % hz) * 1e9 / hz
  constexpr uint64_t kNsPerS = 1000000000ull;
  return (ticks / hz) * kNsPerS + static_cast<uint64_t>((unsigned __int128)(ticks % hz) * kNsPerS / hz);
}

absl::StatusOr<ntprof_record> ConvertSpdkEvent(const ntprof_spdk_event& e) {
  if (e.flags & NTPROF_SPDK_EV_REQ_UNREADABLE)
    return absl::DataLossError(absl::StrCat("process ", e.pid, ": stamp area unreadable at the probe"));
  if (e.req.clock_hz == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "process ", e.pid, " stamps without a clock rate: it must call ntprof_probe_init(hz)"));
  }
  const uint32_t kind = e.kind & NTPROF_SPDK_KIND_MASK;
  if (kind < NTPROF_SPDK_NVMF_TCP || kind > NTPROF_SPDK_NVME_RDMA)
    return absl::InternalError(absl::StrCat("unknown probe kind ", e.kind));

  ntprof_record r;
  std::memset(&r, 0, sizeof(r));
  for (int i = 0; i < NTPROF_PROBE_STAMPS; ++i) {
    const uint64_t s = e.req.stamps[i];
    if (s == 0) continue;
    // A stamp taken after done_ticks (not expected) lands after the probe instead of wrapping.
    r.stamps[i] = s <= e.req.done_ticks
                      ? e.probe_mono_ns - TicksToNs(e.req.done_ticks - s, e.req.clock_hz)
                      : e.probe_mono_ns + TicksToNs(s - e.req.done_ticks, e.req.clock_hz);
  }
  if (!IsTargetKind(kind)) {
    // A user-space host has no block layer: H0/H5 are 0 by contract, whatever the slots hold.
    r.stamps[NTPROF_H0_BLOCK_START] = 0;
    r.stamps[NTPROF_H5_BLOCK_DONE] = 0;
  }
  r.slba = e.slba;
  r.nsid = e.nsid;
  r.nlb = e.nlb;
  r.bytes = e.bytes;
  r.ctrl = e.cntlid;
  r.qid = e.qid;
  r.cid = e.cid;
  r.status = e.status;
  r.opcode = e.opcode;
  r.role = IsTargetKind(kind) ? NTPROF_ROLE_TARGET : NTPROF_ROLE_HOST;
  r.transport = IsRdmaKind(kind) ? NTPROF_TRANSPORT_RDMA : NTPROF_TRANSPORT_TCP;
  r.stack = (e.kind & NTPROF_SPDK_KIND_PROBE_LIBRARY) ? NTPROF_STACK_USERSPACE : NTPROF_STACK_SPDK;
  if ((e.opcode & 3) == 1) r.flags |= NTPROF_F_WRITE;  // data direction bits 01: host to controller
  if (e.status != 0) r.flags |= NTPROF_F_ERROR;
  return r;
}

RecordIdentity SpdkIdentity(const ntprof_spdk_event& e, const std::string& process_name) {
  RecordIdentity id;
  id.subsys_nqn = std::string(e.subnqn, strnlen(e.subnqn, sizeof(e.subnqn)));
  id.cntlid = e.cntlid;
  id.device = absl::StrCat(process_name, ":n", e.nsid);
  return id;
}

bool SpdkRecordMissesStamp(const ntprof_record& rec) {
  if (rec.opcode != 0x01 && rec.opcode != 0x02) return false;  // no data path to stamp
  auto missing = [&](std::initializer_list<int> idx) {
    for (int i : idx) {
      if (!rec.stamps[i]) return true;
    }
    return false;
  };
  if (rec.role == NTPROF_ROLE_TARGET)
    return missing({NTPROF_T0_CAPSULE_RECEIVED, NTPROF_T1_REQ_INIT, NTPROF_T2_BACKEND_SUBMIT,
                    NTPROF_T3_BACKEND_DONE, NTPROF_T4_RESPOND, NTPROF_T5_REPLY_SENT});
  return missing({NTPROF_H1_DRIVER_SUBMIT, NTPROF_H2_CAPSULE_SENT, NTPROF_H3_REPLY_RECEIVED,
                  NTPROF_H4_DRIVER_DONE});
}

}  // namespace ntprof::agent::spdk
