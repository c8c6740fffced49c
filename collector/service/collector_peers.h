// CollectorPeers: the other collectors of a ring (docs/control-plane.md, "Several collectors").
// Agents split their records over the ring by subsystem, so each collector holds a share of every
// session; what ntprofctl asks of one collector it answers for the whole fleet:
//   StartSession, StopSession   done here, then forwarded to every peer (same name, same salt)
//   ListSessions                this collector's sessions merged with the peers', by name
//   Report, Compare, Export     over this collector's files and the peers' (fetched with Export)
//   Watch                       each interval merged with the peers' (FleetWatchReactor)
// A forwarded call carries the metadata `ntprof-forwarded: 1` and is answered from this
// collector's own state only, so forwarding never loops.
//
// Peers come from --peer (repeatable, comma lists) and --peers-file (re-read at every use, so a
// collector added to the ring is asked from then on). Their channels use this collector's TLS
// files: --tls-ca to check a peer, --tls-cert/--tls-key as the client certificate.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector_target.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "session_registry.h"

namespace ntprof::collector {

inline constexpr const char* kForwardedKey = "ntprof-forwarded";

struct PeerOptions {
  std::vector<std::string> peers;
  std::string peers_file;
  cli::CollectorFlags tls;  // ca, cert, key of the channels to the peers
  std::filesystem::path scratch_dir;  // where fetched files wait while a report is built
};

class CollectorPeers {
 public:
  explicit CollectorPeers(PeerOptions options) : options_(std::move(options)) {}

  bool empty() const { return Addresses().empty(); }
  std::vector<std::string> Addresses() const;
  // Was this call forwarded by a peer (answer from local state only)?
  static bool Forwarded(const grpc::CallbackServerContext* context);
  // Marks a call to a peer as forwarded.
  static void MarkForwarded(grpc::ClientContext* context);
  // The stub of one peer's channel (opened once, then shared); null with *error when it cannot be.
  std::shared_ptr<v1::Collector::Stub> StubFor(const std::string& address, std::string* error);

  // Forwards to every peer; returns "peer: error" for each one that failed.
  std::vector<std::string> StartSession(const v1::StartSessionRequest& request);
  std::vector<std::string> StopSession(const std::string& name);
  // Every peer's reply (unreachable ones are named in *errors).
  std::vector<std::pair<std::string, v1::ListSessionsReply>> List(std::vector<std::string>* errors);

  // The session's files on every peer, written under a fresh scratch directory that is removed
  // with the last copy of `scratch`. Their agents are named "<hostname>@<peer>" (the address with
  // characters other than letters, digits, '.' and '-' as '_'), so ExportName tells them from this
  // collector's own. NotFound when no peer has the session.
  struct Fetched {
    StoredSession session;
    std::shared_ptr<const std::filesystem::path> scratch;
  };
  absl::StatusOr<Fetched> Fetch(const std::string& session);

 private:
  // call(peer, stub, context) on every peer with a forwarded context (deadline: 10 s unless given);
  // "collector PEER: why" for each that failed with a code not in `fine`.
  template <typename Call>
  std::vector<std::string> ForEachPeer(const std::vector<grpc::StatusCode>& fine, Call call,
                                       std::chrono::seconds deadline = std::chrono::seconds(10));

  PeerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<v1::Collector::Stub>> stubs_;
  uint64_t fetches_ = 0;
};

// ListSessions of several collectors as one: sessions by name (agents by hostname: records,
// batches and losses summed, connected/opened if any says so; join counts summed, notes joined;
// stopped if any collector stopped it), and every collector's connected agents (a peer's are
// marked with its address).
v1::ListSessionsReply MergeLists(
    v1::ListSessionsReply local,
    const std::vector<std::pair<std::string, v1::ListSessionsReply>>& peers);


}  // namespace ntprof::collector
