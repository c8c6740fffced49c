// CollectorRing: the collectors an agent streams to and which of them gets which record
// (docs/control-plane.md, "Several collectors"). The collectors share the fleet's subsystems on a
// consistent-hash ring (common/hash_ring.h): a record goes to the owner of its subsystem NQN, so
// both halves of a command (host and target carry the same NQN) meet at one collector; a record
// without an NQN (local transport) goes to the owner of this agent's name, its *home* collector.
//
// Each collector has its own Spool and CollectorLink: the wire contract (hello, welcome, seq, ack,
// replay) stays one stream's business. What goes where:
//   SessionOpened, SessionClosed      every collector (each stores its share as a file per agent)
//   records of a batch                the owner of each record's key
//   device counters, loss counters    the home collector only, so that a report over every
//                                     collector's files counts them once
// A batch with no record for a collector is not sent there, except to the home collector.
//
// Membership changes (SetMembers, from --ring-file): a new member gets a spool and a link, and the
// SessionOpened of every recording running now before any of its records; records from then on
// go to their new owner. A removed member takes no new records but still gets the SessionClosed
// of the recordings it has open; its link stays until those are closed and its spool is drained
// (everything acked), then it is closed (Retire). A removed member put back before it retired
// gets the SessionOpened of the recordings that started while it was out, as a new one would.
//
// With no collector at all there is one member named "" with a spool and no link, so that the
// agent's Status and losses work the same way (`--no-collector`).
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector_link.h"
#include "hash_ring.h"
#include "ntprof/v1/collector.pb.h"
#include "spool.h"
#include "wire_batch.h"

namespace ntprof::agent {

struct CollectorRingOptions {
  // The spool of a lone collector given by --collector is this directory itself (as before there
  // were rings); members of a ring (several collectors, or --ring-file) each get a subdirectory
  // named after their address.
  SpoolOptions spool;
  bool spool_per_member = false;
  std::string home_key;  // this agent's name: the key of records without an NQN, and of counters
};

// The most records one spooled batch message carries for a spool of this size (an eighth of it,
// within [64, kMaxBatchRecords]): AppendBatch cuts a larger share into several messages.
size_t RecordsPerSpoolMessage(uint64_t spool_max_bytes);

class CollectorRing {
 public:
  using ChannelFn =
      std::function<absl::StatusOr<std::shared_ptr<grpc::Channel>>(const std::string& address)>;
  using HelloFn = std::function<v1::AgentHello(const Spool& spool)>;

  CollectorRing(CollectorRingOptions options, ChannelFn channel, HelloFn hello,
                CollectorLink::ControlFn control);
  ~CollectorRing();  // Stop()

  // The ring's members (collector addresses); opens the new members' spools (and their links once
  // started). An empty list = no collector (see above). Fails only when a spool cannot be opened.
  absl::Status SetMembers(std::vector<std::string> members);
  void Start();  // dials every member
  void Stop();
  // Closes the links of removed members whose spools are drained; returns how many are left.
  size_t Retire();

  // Routing (what Recordings spools).
  absl::Status AppendOpened(const v1::FileHeader& header);
  absl::Status AppendBatch(const std::string& session, const BatchShare& batch);
  // Losses of the trailer go to the home collector only; error set = the agent could not record.
  absl::Status AppendClosed(const std::string& session, const v1::FileTrailer* trailer,
                            const std::string& error);
  // An interval lost to an agent restart: each stream declares its own number lost.
  absl::Status DeclareLost(const std::string& reason);

  // Which member owns a record's key (its NQN, or this agent's name without one).
  std::string OwnerOf(const v1::Record& record) const;
  std::string HomeMember() const;
  std::vector<std::string> Members() const;  // current ring (not the retiring ones)
  // Sums over every member's spool (epoch and acked_seq: the home member's).
  SpoolStats Stats() const;
  bool AllConnected() const;
  // The base spool directory (recording markers live there).
  const std::filesystem::path& dir() const { return options_.spool.dir; }

 private:
  struct Member {
    std::string address;
    std::unique_ptr<Spool> spool;
    std::unique_ptr<CollectorLink> link;
    bool in_ring = true;
    std::set<std::string> open;  // sessions it got the SessionOpened of and not yet the close
  };

  absl::StatusOr<std::unique_ptr<Member>> OpenMemberLocked(const std::string& address);
  void StartLinkLocked(Member* member);
  Member* RouteLocked(const std::string& key);
  const std::string& HomeLocked() const;
  absl::Status AppendLocked(Member* member, v1::AgentMessage message);
  // The SessionOpened of every recording running now that the member has no open for: it comes
  // before any record the member owns (a new member, or a removed one back before it retired).
  absl::Status OpenRunningLocked(Member* member);

  CollectorRingOptions options_;
  ChannelFn channel_;
  HelloFn hello_;
  CollectorLink::ControlFn control_;
  mutable std::mutex mu_;
  common::HashRing ring_;
  std::map<std::string, std::unique_ptr<Member>> members_;  // by address; retiring ones too
  std::map<std::string, v1::FileHeader> open_sessions_;      // SessionOpened of running recordings
  bool started_ = false;
};

// A spool subdirectory name for a collector address ("collector1:7420" -> "collector1_7420").
std::string SpoolDirName(const std::string& address);

}  // namespace ntprof::agent
