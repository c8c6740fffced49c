// Builds synthetic host and target records with known stamps: the ground truth of the core tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"

namespace ntprof::testing {

struct CommandId {
  std::string nqn = "nqn.2024-01.io.ntprof:test";
  uint32_t cntlid = 1;
  uint32_t qid = 1;
  uint32_t cid = 0;
  uint32_t opcode = 0x02;  // read
  uint64_t slba = 0;
  uint32_t nlb = 7;        // 8 x 512 B = 4 KiB
  uint32_t bytes = 4096;
};

inline v1::Record MakeRecord(v1::Role role, const CommandId& id, const std::vector<uint64_t>& stamps,
                             const std::string& device) {
  v1::Record r;
  r.set_role(role);
  r.set_transport(v1::TRANSPORT_TCP);
  r.set_opcode(id.opcode);
  r.set_nsid(1);
  r.set_slba(id.slba);
  r.set_nlb(id.nlb);
  r.set_bytes(id.bytes);
  r.set_subsys_nqn(id.nqn);
  r.set_cntlid(id.cntlid);
  r.set_qid(id.qid);
  r.set_cid(id.cid);
  r.set_device(device);
  if (id.opcode == 0x01) r.set_flags(NTPROF_F_WRITE);
  for (uint64_t s : stamps) r.add_stamps(s);
  return r;
}

// Host stamps H0..H5 from a start time and the five gaps between them.
inline std::vector<uint64_t> HostStamps(uint64_t h0, uint64_t block_submit, uint64_t driver_submit,
                                        uint64_t wait, uint64_t driver_complete,
                                        uint64_t block_complete) {
  std::vector<uint64_t> s(NTPROF_HOST_STAMPS, 0);
  s[NTPROF_H0_BLOCK_START] = h0;
  s[NTPROF_H1_DRIVER_SUBMIT] = h0 + block_submit;
  s[NTPROF_H2_CAPSULE_SENT] = s[NTPROF_H1_DRIVER_SUBMIT] + driver_submit;
  s[NTPROF_H3_REPLY_RECEIVED] = s[NTPROF_H2_CAPSULE_SENT] + wait;
  s[NTPROF_H4_DRIVER_DONE] = s[NTPROF_H3_REPLY_RECEIVED] + driver_complete;
  s[NTPROF_H5_BLOCK_DONE] = s[NTPROF_H4_DRIVER_DONE] + block_complete;
  return s;
}

// Target stamps T0..T5 from a start time and the five gaps between them.
inline std::vector<uint64_t> TargetStamps(uint64_t t0, uint64_t receive, uint64_t submit,
                                          uint64_t storage, uint64_t respond, uint64_t send) {
  std::vector<uint64_t> s(NTPROF_TARGET_STAMPS, 0);
  s[NTPROF_T0_CAPSULE_RECEIVED] = t0;
  s[NTPROF_T1_REQ_INIT] = t0 + receive;
  s[NTPROF_T2_BACKEND_SUBMIT] = s[NTPROF_T1_REQ_INIT] + submit;
  s[NTPROF_T3_BACKEND_DONE] = s[NTPROF_T2_BACKEND_SUBMIT] + storage;
  s[NTPROF_T4_RESPOND] = s[NTPROF_T3_BACKEND_DONE] + respond;
  s[NTPROF_T5_REPLY_SENT] = s[NTPROF_T4_RESPOND] + send;
  return s;
}

}  // namespace ntprof::testing
