#include "stage_model.h"

#include "ntprof_record.h"

namespace ntprof {
namespace {

struct StageInfo {
  std::string_view id;
  std::string_view label;
};

constexpr std::array<StageInfo, kStageCount> kStages{{
    {"host_block", "host block layer"},
    {"host_driver", "host driver"},
    {"network", "network"},
    {"target_driver", "target driver"},
    {"storage", "storage"},
    {"network_and_target", "network and target (not recorded)"},
    {"local_device", "device (driver + drive)"},
    {"end_to_end", "end to end"},
    {"target_total", "in target (T0-T5)"},
    {"target_network_wait", "waiting on the network (data transfers)"},
    {"target_ack_wait", "waiting for the host's ACK (RDMA send completion)"},
}};

struct ComponentInfo {
  std::string_view id;
  std::string_view label;
  Stage stage;
};

constexpr std::array<ComponentInfo, kComponentCount> kComponents{{
    {"host_block_submit", "block layer submit (H0-H1)", Stage::kHostBlock},
    {"host_block_complete", "block layer completion (H4-H5)", Stage::kHostBlock},
    {"host_driver_submit", "driver submit to capsule sent (H1-H2)", Stage::kHostDriver},
    {"host_r2t_data", "R2T received to data handed", Stage::kHostDriver},
    {"host_driver_complete", "reply to request completed (-H4)", Stage::kHostDriver},
    {"fabric", "wire and network stacks", Stage::kNetwork},
    {"r2t_round_trip", "R2T round trip", Stage::kNetwork},
    {"read_data_transfer", "read data, first PDU to response (H3-resp)", Stage::kNetwork},
    {"rdma_data_transfer", "data transfer (RDMA, at the target)", Stage::kNetwork},
    {"target_receive", "capsule received to request init (T0-T1)", Stage::kTargetDriver},
    {"target_submit", "request init to backend submit (T1-T2)", Stage::kTargetDriver},
    {"target_respond", "backend done to response queued (T3-T4)", Stage::kTargetDriver},
    {"target_send", "response queued to reply sent (T4-T5)", Stage::kTargetDriver},
    {"target_block_submit", "target block layer submit", Stage::kStorage},
    {"drive", "drive", Stage::kStorage},
    {"target_block_complete", "target block layer completion", Stage::kStorage},
}};

uint64_t StampOf(const v1::Record& r, int index) {
  return index < r.stamps_size() ? r.stamps(index) : 0;
}

std::optional<int64_t> Span(uint64_t from, uint64_t to) {
  if (from == 0 || to == 0) return std::nullopt;
  return static_cast<int64_t>(to - from);
}

// The host half: everything measured on the host's clock.
struct HostHalf {
  uint64_t h0, h1, h2, h3, h4, h5;
  int64_t r2t_turnaround = 0;  // host's share of an R2T round trip
  int64_t read_data = 0;       // TCP reads: first data PDU header -> response header
};

struct TargetHalf {
  uint64_t t0, t1, t2, t3, t4, t5;
  int64_t r2t_wait = 0;  // R2T sent -> all write data in (a network round trip)
  int64_t xfer = 0;      // RDMA data transfer measured at the target
  bool xfer_after_backend = false;
};

bool ReadHost(const v1::Record& r, HostHalf* h, IncompleteRecord* why) {
  h->h0 = StampOf(r, NTPROF_H0_BLOCK_START);
  h->h1 = StampOf(r, NTPROF_H1_DRIVER_SUBMIT);
  h->h2 = StampOf(r, NTPROF_H2_CAPSULE_SENT);
  h->h3 = StampOf(r, NTPROF_H3_REPLY_RECEIVED);
  h->h4 = StampOf(r, NTPROF_H4_DRIVER_DONE);
  h->h5 = StampOf(r, NTPROF_H5_BLOCK_DONE);
  // A local block device has no fabric: the block layer's own stamps are the whole command.
  if (r.transport() == v1::TRANSPORT_LOCAL) {
    const std::pair<uint64_t, std::string_view> local[] = {
        {h->h0, "H0 block start"}, {h->h1, "H1 driver submit"}, {h->h5, "H5 block done"}};
    for (const auto& [stamp, name] : local) {
      if (stamp == 0) {
        if (why) why->missing = name;
        return false;
      }
    }
    return true;
  }
  const std::pair<uint64_t, std::string_view> required[] = {
      {h->h1, "H1 driver submit"}, {h->h2, "H2 capsule sent"},
      {h->h3, "H3 reply received"}, {h->h4, "H4 driver done"}};
  for (const auto& [stamp, name] : required) {
    if (stamp == 0) {
      if (why) why->missing = name;
      return false;
    }
  }
  // The block layer is absent for user-space hosts; when present both ends must be.
  if ((h->h0 == 0) != (h->h5 == 0)) {
    if (why) why->missing = h->h0 == 0 ? "H0 block start" : "H5 block done";
    return false;
  }
  if (auto t = Span(StampOf(r, NTPROF_H_R2T_RECEIVED), StampOf(r, NTPROF_H_DATA_SENT))) {
    h->r2t_turnaround = *t;
  }
  // The data PDUs of a read stream in between the first one (H3) and the response capsule: that
  // is the data crossing the network, paced by it, not work of the host driver.
  const uint64_t response = StampOf(r, NTPROF_H_RESPONSE_RECEIVED);
  if (response > h->h3 && response <= h->h4) h->read_data = static_cast<int64_t>(response - h->h3);
  return true;
}

bool ReadTarget(const v1::Record& r, TargetHalf* t, IncompleteRecord* why) {
  t->t0 = StampOf(r, NTPROF_T0_CAPSULE_RECEIVED);
  t->t1 = StampOf(r, NTPROF_T1_REQ_INIT);
  t->t2 = StampOf(r, NTPROF_T2_BACKEND_SUBMIT);
  t->t3 = StampOf(r, NTPROF_T3_BACKEND_DONE);
  t->t4 = StampOf(r, NTPROF_T4_RESPOND);
  t->t5 = StampOf(r, NTPROF_T5_REPLY_SENT);
  const std::pair<uint64_t, std::string_view> required[] = {{t->t0, "T0 capsule received"},
                                                            {t->t2, "T2 backend submit"},
                                                            {t->t3, "T3 backend done"},
                                                            {t->t5, "T5 reply sent"}};
  for (const auto& [stamp, name] : required) {
    if (stamp == 0) {
      if (why) why->missing = name;
      return false;
    }
  }
  // The R2T wait ends when the last byte of data is in, and that byte is what starts the backend
  // submit (T2) in the same call chain; T_DATA_RECEIVED marks the last H2CData *header*, before
  // its payload (up to the whole transfer) has crossed the network.
  if (auto w = Span(StampOf(r, NTPROF_T_R2T_SENT), t->t2)) {
    t->r2t_wait = *w;
  }
  uint64_t posted = StampOf(r, NTPROF_T_XFER_POSTED);
  if (auto x = Span(posted, StampOf(r, NTPROF_T_XFER_DONE))) {
    t->xfer = *x;
    t->xfer_after_backend = posted >= t->t3;
  }
  return true;
}

void Set(CommandBreakdown* b, Stage s, int64_t v) { b->stages[static_cast<size_t>(s)] = v; }
void Set(CommandBreakdown* b, Component c, std::optional<int64_t> v) {
  b->components[static_cast<size_t>(c)] = v;
}

void AddLocalStages(const HostHalf& h, CommandBreakdown* b) {
  Set(b, Stage::kHostBlock, static_cast<int64_t>(h.h1 - h.h0));
  Set(b, Component::kHostBlockSubmit, Span(h.h0, h.h1));
  Set(b, Stage::kLocalDevice, static_cast<int64_t>(h.h5 - h.h1));
  Set(b, Stage::kEndToEnd, static_cast<int64_t>(h.h5 - h.h0));
}

void AddHostStages(const v1::Record& r, const HostHalf& h, CommandBreakdown* b) {
  if (r.transport() == v1::TRANSPORT_LOCAL) return AddLocalStages(h, b);
  const bool has_block = h.h0 != 0;
  if (has_block) {
    Set(b, Stage::kHostBlock, static_cast<int64_t>((h.h1 - h.h0) + (h.h5 - h.h4)));
    Set(b, Component::kHostBlockSubmit, Span(h.h0, h.h1));
    // The kernel hosts stamp H4 at H5 (nvme_complete_rq ends the request in the same call
    // chain): there is no block-layer completion of their own to show.
    if (h.h4 != h.h5) Set(b, Component::kHostBlockComplete, Span(h.h4, h.h5));
  }
  Set(b, Stage::kHostDriver, static_cast<int64_t>(h.h2 - h.h1) + static_cast<int64_t>(h.h4 - h.h3) +
                                 h.r2t_turnaround - h.read_data);
  Set(b, Component::kHostDriverSubmit, Span(h.h1, h.h2));
  if (h.r2t_turnaround != 0) Set(b, Component::kHostR2tData, h.r2t_turnaround);
  Set(b, Component::kHostDriverComplete, static_cast<int64_t>(h.h4 - h.h3) - h.read_data);
  const uint64_t start = has_block ? h.h0 : h.h1;
  const uint64_t end = has_block ? h.h5 : h.h4;
  Set(b, Stage::kEndToEnd, static_cast<int64_t>(end - start));
}

void AddTargetStages(const v1::Record& r, const TargetHalf& t, CommandBreakdown* b) {
  Set(b, Stage::kTargetDriver, static_cast<int64_t>(t.t2 - t.t0) +
                                   static_cast<int64_t>(t.t5 - t.t3) - t.r2t_wait - t.xfer);
  Set(b, Stage::kStorage, static_cast<int64_t>(t.t3 - t.t2));
  const int64_t xfer_before = t.xfer_after_backend ? 0 : t.xfer;
  const int64_t xfer_after = t.xfer_after_backend ? t.xfer : 0;
  if (t.t1 != 0) {
    // The kernel targets stamp T0 at T1 (nvmet_req_init is called where the capsule completes):
    // only SPDK has a receive phase of its own to show.
    if (t.t0 != t.t1) Set(b, Component::kTargetReceive, Span(t.t0, t.t1));
    Set(b, Component::kTargetSubmit,
        static_cast<int64_t>(t.t2 - t.t1) - t.r2t_wait - xfer_before);
  }
  if (t.t4 != 0) {
    // The kernel targets stamp T4 at T3: nvmet core queues the response in the same call, so
    // there is no respond phase of their own to show, only SPDK's.
    if (t.t4 != t.t3) Set(b, Component::kTargetRespond, Span(t.t3, t.t4));
    // NVMe/RDMA posts the response where it queues it (T5 = T4, or T5 ends the transfer that
    // starts at T4): there is no send phase of its own to show.
    const int64_t send = static_cast<int64_t>(t.t5 - t.t4) - xfer_after;
    if (t.t5 != t.t4 && send != 0) Set(b, Component::kTargetSend, send);
  }
  uint64_t issue = StampOf(r, NTPROF_T_DRIVE_ISSUE);
  uint64_t done = StampOf(r, NTPROF_T_DRIVE_DONE);
  if (issue != 0 && done != 0) {
    Set(b, Component::kTargetBlockSubmit, Span(t.t2, issue));
    Set(b, Component::kDrive, Span(issue, done));
    // The kernel targets stamp the drive's completion at T3 (the same call chain ends there).
    if (done != t.t3) Set(b, Component::kTargetBlockComplete, Span(done, t.t3));
  }
}

}  // namespace

std::string_view StageId(Stage stage) { return kStages[static_cast<size_t>(stage)].id; }

std::string_view StageLabel(Stage stage, v1::Stack host_stack, v1::Stack target_stack) {
  if (stage == Stage::kHostDriver && host_stack == v1::STACK_SPDK) return "host driver (SPDK)";
  if (stage == Stage::kHostDriver && host_stack == v1::STACK_USERSPACE) {
    return "host driver (user-space initiator)";
  }
  if (stage == Stage::kTargetDriver && target_stack == v1::STACK_SPDK) return "target driver (SPDK)";
  if (stage == Stage::kTargetDriver && target_stack == v1::STACK_USERSPACE) {
    return "target driver (user-space target)";
  }
  if (stage == Stage::kStorage && target_stack == v1::STACK_SPDK) return "storage (SPDK bdev, drive)";
  return kStages[static_cast<size_t>(stage)].label;
}

std::string_view ComponentId(Component c) { return kComponents[static_cast<size_t>(c)].id; }
std::string_view ComponentLabel(Component c) { return kComponents[static_cast<size_t>(c)].label; }
Stage ComponentStage(Component c) { return kComponents[static_cast<size_t>(c)].stage; }

std::string_view ScopeId(Scope scope) {
  switch (scope) {
    case Scope::kJoined: return "joined";
    case Scope::kHostOnly: return "host_only";
    case Scope::kTargetOnly: return "target_only";
  }
  return "unknown";
}

const std::vector<Stage>& StagesOf(Scope scope) {
  static const std::vector<Stage> joined{Stage::kHostBlock, Stage::kHostDriver, Stage::kNetwork,
                                         Stage::kTargetDriver, Stage::kStorage, Stage::kEndToEnd};
  // A local device's commands have kLocalDevice instead of the driver and fabric stages.
  static const std::vector<Stage> host_only{Stage::kHostBlock, Stage::kHostDriver,
                                            Stage::kNetworkAndTarget, Stage::kLocalDevice,
                                            Stage::kEndToEnd};
  static const std::vector<Stage> target_only{Stage::kTargetDriver, Stage::kStorage,
                                              Stage::kTargetNetworkWait, Stage::kTargetAckWait,
                                              Stage::kTargetTotal};
  switch (scope) {
    case Scope::kJoined: return joined;
    case Scope::kHostOnly: return host_only;
    case Scope::kTargetOnly: return target_only;
  }
  return joined;
}

std::optional<CommandBreakdown> BreakDown(const v1::Record* host, const v1::Record* target,
                                          IncompleteRecord* why) {
  HostHalf h{};
  TargetHalf t{};
  if (host && !ReadHost(*host, &h, why)) return std::nullopt;
  if (target && !ReadTarget(*target, &t, why)) return std::nullopt;
  if (!host && !target) return std::nullopt;

  CommandBreakdown b;
  if (host) AddHostStages(*host, h, &b);
  if (target) AddTargetStages(*target, t, &b);

  if (host && target) {
    b.scope = Scope::kJoined;
    // (H3-H2) spans the whole target; subtract the target's own span (T5-T0), then give back the
    // parts of it that were waits on the network (R2T data, RDMA transfer).
    const int64_t host_wait = static_cast<int64_t>(h.h3 - h.h2) - h.r2t_turnaround + h.read_data;
    const int64_t target_span = static_cast<int64_t>(t.t5 - t.t0) - t.r2t_wait - t.xfer;
    const int64_t network = host_wait - target_span;
    Set(&b, Stage::kNetwork, network);
    int64_t fabric = network;
    if (t.r2t_wait != 0) {
      Set(&b, Component::kR2tRoundTrip, t.r2t_wait - h.r2t_turnaround);
      fabric -= t.r2t_wait - h.r2t_turnaround;
    }
    // A write's RDMA READ runs inside the target's span, so the host waited through all of it.
    // A read's data WRITEs and response SEND complete at the target when the host's ACK is
    // back, which can be after the host already had the response (measured: up to ms with
    // soft-RoCE): that span is no part of network, and the read's data crossing cannot be told
    // apart from the rest of it. It stays in the fabric component.
    if (t.xfer != 0 && !t.xfer_after_backend) {
      Set(&b, Component::kRdmaDataTransfer, t.xfer);
      fabric -= t.xfer;
    }
    if (h.read_data != 0) {
      Set(&b, Component::kReadDataTransfer, h.read_data);
      fabric -= h.read_data;
    }
    Set(&b, Component::kFabric, fabric);
  } else if (host) {
    b.scope = Scope::kHostOnly;
    if (host->transport() != v1::TRANSPORT_LOCAL) {
      Set(&b, Stage::kNetworkAndTarget,
          static_cast<int64_t>(h.h3 - h.h2) - h.r2t_turnaround + h.read_data);
    }
  } else {
    b.scope = Scope::kTargetOnly;
    Set(&b, Stage::kTargetTotal, static_cast<int64_t>(t.t5 - t.t0));
    // What the target driver stage leaves out of the target's span, so the rows add up: waits
    // for a write's data, and (NVMe/RDMA) a read's transfer posted with the response, which
    // completes only when the host's acknowledgement is back, long after the data left.
    const int64_t xfer_after = t.xfer_after_backend ? t.xfer : 0;
    Set(&b, Stage::kTargetNetworkWait, t.r2t_wait + t.xfer - xfer_after);
    if (target->transport() == v1::TRANSPORT_RDMA) Set(&b, Stage::kTargetAckWait, xfer_after);
  }
  return b;
}

uint64_t EarliestStamp(const v1::Record& record) {
  return EarliestStamp(std::span<const uint64_t>(record.stamps().data(),
                                                 static_cast<size_t>(record.stamps_size())));
}

uint64_t EarliestStamp(std::span<const uint64_t> stamps) {
  uint64_t first = 0;
  for (uint64_t s : stamps) {
    if (s != 0 && (first == 0 || s < first)) first = s;
  }
  return first;
}

}  // namespace ntprof
