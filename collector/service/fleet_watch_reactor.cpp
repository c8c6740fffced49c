#include "fleet_watch_reactor.h"

#include "absl/strings/str_cat.h"
#include "watch_end.h"
#include "watch_merge.h"

namespace ntprof::collector {
namespace {

constexpr auto kReopenEvery = std::chrono::seconds(2);

}  // namespace

FleetWatchReactor::FleetWatchReactor(grpc::CallbackServerContext* context, WatchHub* hub,
                                     CollectorPeers* peers, const v1::WatchRequest& request,
                                     int64_t now_ns)
    : WatchWriter(context, request.session()), hub_(hub), peers_(peers), request_(request) {
  for (const std::string& address : peers_->Addresses()) {
    auto peer = std::make_unique<Peer>();
    peer->address = address;
    peers_state_.push_back(std::move(peer));
  }
  subscription_ = hub_->Subscribe(
      WatchFilter::From(request),
      [this] {
        {
          std::lock_guard lock(mu_);
          local_ready_ = true;
        }
        changed_.notify_all();
      },
      now_ns);
  for (auto& peer : peers_state_) peer->thread = std::thread([this, p = peer.get()] { FollowPeer(p); });
  merger_ = std::thread([this] { MergeIntervals(); });
}

void FleetWatchReactor::FollowPeer(Peer* peer) {
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;  // stopped: the collector (and peers_) may be going away
    }
    std::string error;
    auto stub = peers_->StubFor(peer->address, &error);
    if (stub) {
      grpc::ClientContext context;
      CollectorPeers::MarkForwarded(&context);
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        peer->context = &context;
      }
      auto reader = stub->Watch(&context, request_);
      v1::WatchUpdate update;
      while (reader->Read(&update)) {
        {
          std::lock_guard lock(mu_);
          peer->streaming = true;
          peer->down.clear();
          peer->pending.push_back(std::move(update));
        }
        changed_.notify_all();
      }
      const grpc::Status status = reader->Finish();
      if (status.ok() && context.GetServerTrailingMetadata().count(common::kWatchEndKey) != 0) {
        std::lock_guard lock(mu_);
        peer->context = nullptr;
        peer->streaming = false;
        peer->ended = true;
        changed_.notify_all();
        return;
      }
      error = status.error_message().empty() ? "its watch ended" : status.error_message();
    }
    std::unique_lock lock(mu_);
    peer->context = nullptr;
    peer->streaming = false;
    peer->down = error;
    changed_.notify_all();
    if (changed_.wait_for(lock, kReopenEvery, [&] { return stopping_; })) return;
  }
}

void FleetWatchReactor::MergeIntervals() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return stopping_ || local_ready_; });
      if (stopping_) return;
      local_ready_ = false;
    }
    while (true) {
      const bool ended = subscription_->ended();  // first: see WatchSubscription::ended
      auto local = subscription_->Next();
      if (!local) {
        if (!ended) break;
        all_merged_ = true;
        WriteNext();
        return;
      }
      v1::WatchUpdate merged = MergeOne(std::move(*local));
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
      }
      out_.Push(std::move(merged));
      WriteNext();
    }
  }
}

v1::WatchUpdate FleetWatchReactor::MergeOne(v1::WatchUpdate local) {
  std::vector<v1::WatchUpdate> parts;
  std::vector<std::string> notes;
  {
    std::unique_lock lock(mu_);
    // A peer whose stream is down is not waited for; one that is up gets kPeerWait to deliver.
    changed_.wait_for(lock, kPeerWait, [&] {
      if (stopping_) return true;
      for (const auto& p : peers_state_) {
        if (p->pending.empty() && p->down.empty() && !p->ended) return false;
      }
      return true;
    });
    for (auto& p : peers_state_) {
      if (p->pending.empty()) {
        if (p->ended) continue;  // the session ended there: nothing is missing
        notes.push_back(absl::StrCat(
            "collector ", p->address, ": ",
            p->down.empty() ? absl::StrCat("no update within ", kPeerWait.count(), " ms (late)")
                            : absl::StrCat("down (", p->down, ")"),
            "; its subsystems are missing from this interval"));
        continue;
      }
      for (auto& u : p->pending) parts.push_back(std::move(u));
      p->pending.clear();
    }
  }
  const uint64_t local_drops = local.dropped_updates();
  v1::WatchUpdate merged = MergeWatchUpdates(std::move(local), parts);
  merged.set_dropped_updates(local_drops);
  for (std::string& note : notes) merged.add_notes(std::move(note));
  return merged;
}

std::optional<v1::WatchUpdate> FleetWatchReactor::NextUpdate() {
  auto update = out_.Pop();
  if (update) update->set_dropped_updates(update->dropped_updates() + out_.dropped());
  return update;
}

void FleetWatchReactor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& p : peers_state_) {
      if (p->context) p->context->TryCancel();
    }
  }
  changed_.notify_all();
}

void FleetWatchReactor::OnDone() {
  hub_->Unsubscribe(subscription_);  // no notify after this returns
  Stop();
  // Joined on a thread of our own: gRPC runs OnDone on its one executor thread, which may also
  // hold the work a follower still waits for (its peer's last message and status). Joining here
  // waited forever for it, and stalled every peer call of this collector meanwhile.
  std::thread([this] {
    if (merger_.joinable()) merger_.join();
    for (auto& p : peers_state_) {
      if (p->thread.joinable()) p->thread.join();
    }
    delete this;
  }).detach();
}

}  // namespace ntprof::collector
