// Collector.Watch asked of a collector of a ring: this collector's intervals merged with its
// peers' (docs/control-plane.md, "Several collectors"), so the client sees the whole fleet.
//
// One thread per peer follows that peer's Watch (forwarded: it answers from its own share), and
// reopens it every 2 s while it is down. A merger thread takes each interval of the local
// subscription, waits up to kPeerWait for an update of every peer whose stream is up, and queues
// MergeWatchUpdates of what has come; a peer that is down or late is named in the update's
// notes. A watch of one session ends when the session ends here, after its last interval (a
// peer whose watch ended with the session is not waited for any more). Every update a peer sends is merged into exactly one interval, so counts over a watch
// add up even when the collectors' ticks drift. The writes are WatchWriter's, from a bounded
// queue: the oldest dropped (and counted) when the client reads too slowly.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bounded_queue.h"
#include "collector_peers.h"
#include "ntprof/v1/collector.grpc.pb.h"
#include "watch_hub.h"
#include "watch_reactor.h"

namespace ntprof::collector {

class FleetWatchReactor final : public WatchWriter {
 public:
  // How long an interval waits for the peers' update of the same interval.
  static constexpr std::chrono::milliseconds kPeerWait{1500};

  FleetWatchReactor(grpc::CallbackServerContext* context, WatchHub* hub, CollectorPeers* peers,
                    const v1::WatchRequest& request, int64_t now_ns);

  // Returns at once: the threads are joined, and this deleted, off gRPC's threads.
  void OnDone() override;

 private:
  struct Peer {
    std::string address;
    std::deque<v1::WatchUpdate> pending;  // arrived since the last merged interval
    bool streaming = false;               // its Watch is open
    std::string down;                     // why it is not, once it failed
    bool ended = false;                   // its watch ended with the session: nothing follows
    grpc::ClientContext* context = nullptr;  // of the open call, to cancel it
    std::thread thread;
  };

  void FollowPeer(Peer* peer);
  void MergeIntervals();
  v1::WatchUpdate MergeOne(v1::WatchUpdate local);
  void Stop();
  std::optional<v1::WatchUpdate> NextUpdate() override;
  bool Ended() const override { return all_merged_; }
  void Cancelled() override { Stop(); }

  WatchHub* hub_;
  CollectorPeers* peers_;
  const v1::WatchRequest request_;
  std::shared_ptr<WatchSubscription> subscription_;

  std::mutex mu_;  // peers_state_, local_ready_, stopping_
  std::condition_variable changed_;
  std::vector<std::unique_ptr<Peer>> peers_state_;
  bool local_ready_ = false;
  bool stopping_ = false;
  // The session ended here and its last interval is merged and queued (in out_).
  std::atomic<bool> all_merged_ = false;
  std::thread merger_;

  BoundedQueue<v1::WatchUpdate> out_{64};
};

}  // namespace ntprof::collector
