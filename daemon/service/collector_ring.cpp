#include "collector_ring.h"

#include <algorithm>

#include "interval_batch.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "wire_format.h"

namespace ntprof::agent {
namespace {

// AgentMessage{seq, batch: SessionBatch{session, batch: RecordBatch{seq, ...}}} in wire form,
// written outside in from the sizes, so that the records are copied once, from the batch.
void EncodeBatchMessage(uint64_t seq, const std::string& session, const BatchShare& share,
                        std::string* out) {
  v1::RecordBatch head = share.extras();  // seq, counters, losses; the records follow it
  head.set_seq(seq);
  const BatchShare numbered(share.batch(), head, share.kept());
  const size_t batch_size = numbered.WireSize();
  const size_t session_batch_size =
      LengthDelimitedSize(v1::SessionBatch::kSessionFieldNumber, session.size()) +
      LengthDelimitedSize(v1::SessionBatch::kBatchFieldNumber, batch_size);
  v1::AgentMessage message_head;
  message_head.set_seq(seq);
  message_head.AppendToString(out);
  AppendLengthDelimitedHead(v1::AgentMessage::kBatchFieldNumber, session_batch_size, out);
  AppendLengthDelimited(v1::SessionBatch::kSessionFieldNumber, session, out);
  AppendLengthDelimitedHead(v1::SessionBatch::kBatchFieldNumber, batch_size, out);
  numbered.AppendTo(out);
}

absl::Status SpoolError(const std::string& address, const absl::Status& st) {
  return absl::Status(st.code(), absl::StrCat("spool of collector ",
                                              address.empty() ? "(none)" : address, ": ",
                                              st.message()));
}

}  // namespace


std::string SpoolDirName(const std::string& address) {
  std::string name;
  for (char c : address) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '-';
    name += plain ? c : '_';
  }
  return name.empty() || name[0] == '.' ? "_" + name : name;
}

CollectorRing::CollectorRing(CollectorRingOptions options, ChannelFn channel, HelloFn hello,
                             CollectorLink::ControlFn control)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      hello_(std::move(hello)),
      control_(std::move(control)) {}

CollectorRing::~CollectorRing() { Stop(); }

absl::StatusOr<std::unique_ptr<CollectorRing::Member>> CollectorRing::OpenMemberLocked(
    const std::string& address) {
  auto m = std::make_unique<Member>();
  m->address = address;
  SpoolOptions spool = options_.spool;
  if (options_.spool_per_member && !address.empty()) spool.dir /= SpoolDirName(address);
  auto opened = Spool::Open(spool);
  if (!opened.ok()) return opened.status();
  m->spool = std::move(*opened);
  const SpoolStats s = m->spool->Stats();
  spdlog::info("spool {}: epoch {:016x}, last seq {}, {} message(s) kept{}", spool.dir.string(),
               s.epoch, s.last_seq, s.unacked_messages,
               s.torn_frames ? absl::StrCat(", ", s.torn_frames, " damaged frame(s) cut off")
                             : std::string());
  if (!address.empty()) {
    auto channel = channel_(address);
    if (!channel.ok()) return channel.status();
    Spool* raw = m->spool.get();
    m->link = std::make_unique<CollectorLink>(
        address, *channel, raw, [this, raw] { return hello_(*raw); }, control_);
  }
  return m;
}

void CollectorRing::StartLinkLocked(Member* member) {
  if (member->link) member->link->Start();
}

absl::Status CollectorRing::SetMembers(std::vector<std::string> members) {
  std::lock_guard lock(mu_);
  common::HashRing ring(members);
  std::vector<std::string> wanted = ring.members();
  if (wanted.empty()) wanted.push_back("");  // no collector: one local spool
  for (const std::string& address : wanted) {
    auto it = members_.find(address);
    if (it != members_.end()) {
      Member* member = it->second.get();
      if (!member->in_ring) {
        spdlog::info("collector {} is back in the ring", address);
        // Not yet retired: the recordings that started while it was out never reached it.
        if (auto st = OpenRunningLocked(member); !st.ok()) return st;
      }
      member->in_ring = true;
      continue;
    }
    auto m = OpenMemberLocked(address);
    if (!m.ok()) return m.status();
    Member* member = m->get();
    members_[address] = std::move(*m);
    if (auto st = OpenRunningLocked(member); !st.ok()) return st;
    if (started_) {
      spdlog::info("collector {} joined the ring ({} member(s))", address, ring.members().size());
      StartLinkLocked(member);
    }
  }
  for (auto& [address, member] : members_) {
    if (std::find(wanted.begin(), wanted.end(), address) != wanted.end()) continue;
    if (member->in_ring) {
      spdlog::info("collector {} left the ring: no new records go there; its link stays until its "
                   "spool is drained",
                   address);
    }
    member->in_ring = false;
  }
  ring_ = std::move(ring);
  return absl::OkStatus();
}

void CollectorRing::Start() {
  std::lock_guard lock(mu_);
  started_ = true;
  for (auto& [address, member] : members_) StartLinkLocked(member.get());
}

void CollectorRing::Stop() {
  std::vector<CollectorLink*> links;
  {
    std::lock_guard lock(mu_);
    for (auto& [address, member] : members_) {
      if (member->link) links.push_back(member->link.get());
    }
  }
  for (CollectorLink* link : links) link->Stop();
}

size_t CollectorRing::Retire() {
  std::vector<std::unique_ptr<Member>> gone;
  size_t retiring = 0;
  {
    std::lock_guard lock(mu_);
    for (auto it = members_.begin(); it != members_.end();) {
      Member& m = *it->second;
      if (m.in_ring || !m.open.empty() || m.spool->Stats().unacked_messages > 0) {
        retiring += m.in_ring ? 0 : 1;
        ++it;
        continue;
      }
      spdlog::info("collector {}: spool drained, link closed", m.address);
      gone.push_back(std::move(it->second));
      it = members_.erase(it);
    }
  }
  gone.clear();  // links stop outside the lock (their threads may be in a callback)
  return retiring;
}

const std::string& CollectorRing::HomeLocked() const { return ring_.Owner(options_.home_key); }

CollectorRing::Member* CollectorRing::RouteLocked(const std::string& key) {
  const std::string& owner = ring_.empty() ? std::string() : ring_.Owner(key);
  auto it = members_.find(owner);
  return it == members_.end() ? nullptr : it->second.get();
}

std::string CollectorRing::OwnerOf(const v1::Record& record) const {
  std::lock_guard lock(mu_);
  return ring_.Owner(record.subsys_nqn().empty() ? options_.home_key : record.subsys_nqn());
}

std::string CollectorRing::HomeMember() const {
  std::lock_guard lock(mu_);
  return HomeLocked();
}

std::vector<std::string> CollectorRing::Members() const {
  std::lock_guard lock(mu_);
  return ring_.members();
}

absl::Status CollectorRing::AppendLocked(Member* member, v1::AgentMessage message) {
  auto seq = member->spool->Append(std::move(message));
  return seq.ok() ? absl::OkStatus() : SpoolError(member->address, seq.status());
}

absl::Status CollectorRing::OpenRunningLocked(Member* member) {
  for (const auto& [session, header] : open_sessions_) {
    if (member->open.count(session) != 0) continue;
    v1::AgentMessage opened;
    *opened.mutable_opened()->mutable_header() = header;
    if (auto st = AppendLocked(member, std::move(opened)); !st.ok()) return st;
    member->open.insert(session);
  }
  return absl::OkStatus();
}

absl::Status CollectorRing::AppendOpened(const v1::FileHeader& header) {
  std::lock_guard lock(mu_);
  open_sessions_[header.session()] = header;
  absl::Status result;
  for (auto& [address, member] : members_) {
    if (!member->in_ring) continue;
    v1::AgentMessage m;
    *m.mutable_opened()->mutable_header() = header;
    absl::Status st = AppendLocked(member.get(), std::move(m));
    if (st.ok()) member->open.insert(header.session());
    result.Update(st);
  }
  return result;
}

absl::Status CollectorRing::AppendBatch(const std::string& session, const BatchShare& batch) {
  std::lock_guard lock(mu_);
  Member* home = RouteLocked(options_.home_key);
  // The records each member owns, as indexes into the batch. A batch's records nearly always
  // share one identity, so the owner is looked up when the identity changes, not per record.
  std::map<Member*, std::vector<uint32_t>> owned;
  if (home) owned[home];
  const WireBatch& records = batch.batch();
  uint32_t routed_identity = UINT32_MAX;
  Member* owner = nullptr;
  for (size_t i = 0; i < batch.size(); ++i) {
    const ntprof_record& r = batch.raw(i);
    if (r.pad != routed_identity) {  // the record's identity (wire_batch.h)
      const std::string& nqn = records.identity(r).subsys_nqn;
      owner = RouteLocked(nqn.empty() ? options_.home_key : nqn);
      routed_identity = r.pad;
    }
    if (owner) owned[owner].push_back(batch.index(i));  // null cannot happen: all have a spool
  }
  const v1::RecordBatch no_extras;  // counters and losses go to the home collector only
  const size_t per_message = RecordsPerSpoolMessage(options_.spool.max_bytes);
  absl::Status result;
  for (auto& [member, kept] : owned) {
    // A spool drops its oldest messages whole to stay under its size, so a message bigger than
    // the spool could never be kept: a busy interval (a batch can hold a ring buffer's worth of
    // records past kMaxBatchRecords) goes as several messages, the counters with the last one.
    size_t begin = 0;
    do {
      const size_t end = std::min(kept.size(), begin + per_message);
      const bool last = end == kept.size();
      std::vector<uint32_t> part;  // only when the share is cut: most go whole, uncopied
      if (begin > 0 || !last) part.assign(kept.begin() + begin, kept.begin() + end);
      const std::vector<uint32_t>& indexes = part.empty() ? kept : part;
      const BatchShare share(records, member == home && last ? batch.extras() : no_extras,
                             &indexes);
      auto seq = member->spool->AppendEncoded(
          [&](uint64_t seq, std::string* out) { EncodeBatchMessage(seq, session, share, out); },
          static_cast<uint32_t>(indexes.size()));
      if (!seq.ok()) result.Update(SpoolError(member->address, seq.status()));
      begin = end;
    } while (begin < kept.size());
  }
  return result;
}

size_t RecordsPerSpoolMessage(uint64_t spool_max_bytes) {
  // an eighth of the spool a message, so that a full spool still keeps the newest several
  const uint64_t records = spool_max_bytes / 8 / sizeof(ntprof_record);
  return static_cast<size_t>(std::clamp<uint64_t>(records, 64, kMaxBatchRecords));
}

absl::Status CollectorRing::AppendClosed(const std::string& session,
                                         const v1::FileTrailer* trailer, const std::string& error) {
  std::lock_guard lock(mu_);
  open_sessions_.erase(session);
  const Member* home = RouteLocked(options_.home_key);
  absl::Status result;
  for (auto& [address, member] : members_) {
    // Every member in the ring (a refusal has no open), and a removed one whose file is open.
    if (!member->in_ring && member->open.count(session) == 0) continue;
    member->open.erase(session);
    v1::AgentMessage m;
    m.mutable_closed()->set_session(session);
    if (!error.empty()) m.mutable_closed()->set_error(error);
    if (trailer) {
      v1::FileTrailer t = *trailer;
      // Counts are the collector's to write (it counts what its file holds); losses are counted
      // once, at home.
      if (member.get() != home) t.clear_losses();
      *m.mutable_closed()->mutable_trailer() = std::move(t);
    }
    result.Update(AppendLocked(member.get(), std::move(m)));
  }
  return result;
}

absl::Status CollectorRing::DeclareLost(const std::string& reason) {
  std::lock_guard lock(mu_);
  absl::Status result;
  for (auto& [address, member] : members_) {
    auto seq = member->spool->DeclareLost(reason);
    if (!seq.ok()) {
      result.Update(seq.status());
    } else {
      spdlog::warn("{}: declared seq {} lost{}", reason, *seq,
                   address.empty() ? std::string() : absl::StrCat(" to ", address));
    }
  }
  return result;
}

SpoolStats CollectorRing::Stats() const {
  std::lock_guard lock(mu_);
  SpoolStats total;
  const std::string& home = ring_.empty() ? std::string() : HomeLocked();
  for (const auto& [address, member] : members_) {
    const SpoolStats s = member->spool->Stats();
    if (address == home) {
      total.epoch = s.epoch;
      total.last_seq = s.last_seq;
      total.acked_seq = s.acked_seq;
    }
    total.unacked_messages += s.unacked_messages;
    total.unacked_bytes += s.unacked_bytes;
    total.disk_bytes += s.disk_bytes;
    total.spool_full_lost += s.spool_full_lost;
    total.spool_full_messages += s.spool_full_messages;
    total.torn_frames += s.torn_frames;
  }
  return total;
}

bool CollectorRing::AllConnected() const {
  std::lock_guard lock(mu_);
  for (const auto& [address, member] : members_) {
    if (member->in_ring && member->link && !member->link->connected()) return false;
  }
  return true;
}

}  // namespace ntprof::agent
