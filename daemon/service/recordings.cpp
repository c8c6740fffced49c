#include "recordings.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "loss_counters.h"
#include "monotonic_clock.h"
#include "recorder.h"
#include "recording_settings.h"
#include "spdk_recorder.h"
#include "spdlog/spdlog.h"

namespace ntprof::agent {

struct Recordings::Recording {
  v1::RecordingSettings settings;
  bool spooled = false;              // started by the collector
  uint64_t spool_full_at_start = 0;  // the spool's loss is counted per recording from its start
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::unique_ptr<Sink> sink;  // its share of the recorder's batches goes out here
  std::shared_ptr<Shared> owner;  // the recorder it joined
  std::promise<absl::StatusOr<v1::FileHeader>> started;
  std::promise<absl::StatusOr<v1::FileTrailer>> finished;
  std::shared_future<absl::StatusOr<v1::FileTrailer>> finished_future;
  std::mutex mu;  // guards the fields below
  v1::FileHeader header;
  bool header_known = false;
  v1::LossCounters losses;
  std::vector<std::shared_ptr<RecordFeed>> feeds;
  std::string stop_reason;  // who set `stop`

  void RequestStop(const std::string& reason) {
    {
      std::lock_guard lock(mu);
      if (stop_reason.empty()) stop_reason = reason;  // the first request is the one obeyed
    }
    stop = true;
  }
  // Why it ended: who asked, else the recording's own reason (duration elapsed, device gone).
  std::string StopReason(const std::string& own) {
    if (!stop) return own;
    std::lock_guard lock(mu);
    return stop_reason;
  }
};

struct Recordings::Shared {
  uint64_t salt = 0;
  std::string device;  // what the recorder watches ("" = every device of the transport)
  std::string first_session;
  SessionFanOut fan_out;
  std::thread thread;
  std::atomic<bool> done{false};
  std::mutex mu;  // guards the fields below
  bool attached = false;
  v1::FileHeader header;  // the recorder's
  std::function<absl::Status(uint32_t)> set_rate;
  std::function<std::string()> own_reason;  // the recorder's stop reason
  std::vector<std::shared_ptr<Recording>> waiting;  // joined before the recorder attached
};

// Where a recording's batches go: the spool (collector recordings) and the Record callers.
class Recordings::Sink : public BatchSink {
 public:
  Sink(Recordings* owner, Recording* recording) : owner_(owner), recording_(recording) {}

  // The session's share of the recorder's batch (SessionFanOut).
  absl::Status WriteBatch(const BatchShare& batch) override {
    // The spool's loss is the agent's, not the kernel's: it rides in-band with every batch.
    v1::RecordBatch extras = batch.extras();
    extras.mutable_losses()->set_spool_full(SpoolLoss());
    const BatchShare share(batch.batch(), extras, batch.kept());
    {
      std::lock_guard lock(recording_->mu);
      recording_->losses = extras.losses();
    }
    records_ += share.size();
    ++batches_;
    if (recording_->spooled) {
      // Split over the collectors by the ring; each spool numbers its share.
      if (auto st = owner_->ring_->AppendBatch(recording_->settings.session(), share); !st.ok())
        return st;
    }
    owner_->Publish(*recording_, [&] {
      v1::RecordStreamMessage out;
      *out.mutable_batch() = share.ToMessage();
      return out;
    });
    return absl::OkStatus();
  }

  absl::Status Finalize(const v1::FileTrailer& trailer) override {
    v1::FileTrailer t = trailer;
    t.mutable_losses()->set_spool_full(SpoolLoss());
    trailer_ = t;
    if (recording_->spooled) {
      if (auto st = owner_->ring_->AppendClosed(recording_->settings.session(), &t, "");
          !st.ok())
        return st;
    }
    owner_->Publish(*recording_, [&] {
      v1::RecordStreamMessage out;
      *out.mutable_trailer() = t;
      return out;
    });
    return absl::OkStatus();
  }
  const v1::FileTrailer& trailer() const { return trailer_; }
  uint64_t records() const { return records_; }
  uint64_t batches() const { return batches_; }

 private:
  uint64_t SpoolLoss() const {
    return owner_->ring_->Stats().spool_full_lost - recording_->spool_full_at_start;
  }

  Recordings* owner_;
  Recording* recording_;
  v1::FileTrailer trailer_;
  uint64_t records_ = 0;
  uint64_t batches_ = 0;
};

std::filesystem::path Recordings::MarkerOf(const std::string& session) const {
  return ring_->dir() / (session + ".recording");
}

Recordings::Recordings(AgentConfig config, CollectorRing* ring, const KernelFacts* facts)
    : config_(std::move(config)), ring_(ring), facts_(facts) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ring_->dir(), ec)) {
    if (entry.path().extension() != ".recording") continue;
    const std::string session = entry.path().stem().string();
    auto st = ring_->DeclareLost(absl::StrCat("agent restarted while recording session ", session,
                                              ": the records of its last interval were lost"));
    if (st.ok()) {
      spdlog::warn("the last run stopped while recording session {}: its last interval is lost",
                   session);
      std::filesystem::remove(entry.path(), ec);
    } else {
      spdlog::error("cannot declare the loss of session {}: {}", session,
                    std::string(st.message()));
    }
  }
}

Recordings::~Recordings() { StopAll("stopped: the agent is shutting down"); }

std::string Recordings::DeviceOf(const v1::RecordingSettings& settings) const {
  return settings.devices_size() > 0 ? settings.devices(0) : config_.device;
}

std::string Recordings::Incompatibility(const Shared& shared,
                                        const v1::RecordingSettings& settings) const {
  if (!config_.spdk.empty()) {
    return absl::StrCat("already recording session ", shared.first_session,
                        "; with --spdk an agent records one session at a time: stop it first");
  }
  if (settings.salt() != shared.salt) {
    return absl::StrCat("session ", shared.first_session, " records with salt ", shared.salt,
                        ", this one with ", settings.salt(), "; sessions on one agent share one ",
                        "salt: start it without --salt (the collector gives it the fleet's)");
  }
  if (!shared.device.empty() && DeviceOf(settings) != shared.device) {
    return absl::StrCat("session ", shared.first_session, " records only device ", shared.device,
                        "; a session on another device (or on all) cannot share this agent's ",
                        "recorder: name --devices ", shared.device, " or stop it first");
  }
  return "";
}

absl::StatusOr<std::shared_ptr<Recordings::Recording>> Recordings::Launch(
    const v1::RecordingSettings& settings, bool spooled) {
  const std::string& name = settings.session();
  if (name.empty() || name.find('/') != std::string::npos || absl::StartsWith(name, "."))
    return absl::InvalidArgumentError("a recording needs a session name without '/'");
  const v1::Role role = ToProto(config_.role);
  if (settings.role() != v1::ROLE_UNKNOWN && settings.role() != role) {
    return absl::FailedPreconditionError(
        absl::StrCat("this agent records as ", RoleName(config_.role),
                     "; start another ntprofd with --role for the other role"));
  }
  if (auto st = CheckRecordingSettings(settings); !st.ok()) return st;
  if (settings.devices_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("one device per agent recording (got ",
                                                   absl::StrJoin(settings.devices(), ", "), ")"));
  }
  auto r = std::make_shared<Recording>();
  r->settings = settings;
  r->spooled = spooled;
  r->finished_future = r->finished.get_future().share();
  std::unique_lock lock(mu_);
  while (true) {
    ReapLocked();
    if (running_.count(name) != 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("already recording session ", name, " on this agent"));
    }
    if (!shared_ || shared_->done) break;
    // A recorder whose last session left is draining: nothing to share or to clash with (with
    // --spdk a session started right after the last one stopped was refused as a second one).
    if (!Ending(*shared_)) {
      if (std::string why = Incompatibility(*shared_, settings); !why.empty())
        return absl::FailedPreconditionError(why);
      r->spool_full_at_start = ring_->Stats().spool_full_lost;
      if (spooled) std::ofstream(MarkerOf(name)).close();
      running_[name] = r;
      if (Join(shared_, r)) return r;
      running_.erase(name);
    }
    // Its last session just left: the recorder is draining; a new one follows once it is done.
    std::shared_ptr<Shared> ending = shared_;
    lock.unlock();
    while (!ending->done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lock.lock();
  }
  auto shared = std::make_shared<Shared>();
  shared->salt = settings.salt();
  shared->device = DeviceOf(settings);
  shared->first_session = name;
  r->spool_full_at_start = ring_->Stats().spool_full_lost;
  if (spooled) std::ofstream(MarkerOf(name)).close();
  running_[name] = r;
  Join(shared, r);
  if (shared_) finished_.push_back(shared_);
  shared_ = shared;
  shared->thread = std::thread([this, shared, settings] { RunShared(shared, settings); });
  return r;
}

bool Recordings::EndingLocked(const Shared& shared) {
  return shared.attached && shared.fan_out.stop();
}

bool Recordings::Ending(Shared& shared) {
  std::lock_guard lock(shared.mu);
  return EndingLocked(shared);
}

bool Recordings::Join(const std::shared_ptr<Shared>& shared, std::shared_ptr<Recording> r) {
  std::lock_guard lock(shared->mu);
  if (EndingLocked(*shared)) return false;
  r->owner = shared;
  if (shared->attached) return OpenLocked(*shared, r, true);
  shared->waiting.push_back(r);
  return true;
}

bool Recordings::OpenLocked(Shared& shared, std::shared_ptr<Recording> r, bool recording_now) {
  const v1::RecordingSettings& s = r->settings;
  const uint64_t start_mono = ClockNs(CLOCK_MONOTONIC);
  const uint64_t end_mono =
      s.duration_s() == 0 ? 0 : start_mono + uint64_t{s.duration_s()} * 1'000'000'000;
  v1::FileHeader header = shared.header;
  header.set_session(s.session());
  header.set_sample_rate(s.sample_rate());
  header.set_salt(s.salt());
  header.set_start_wall_ns(ClockNs(CLOCK_REALTIME));
  header.set_start_mono_ns(start_mono);
  auto opened = [&] {
    {
      std::lock_guard lock(r->mu);
      r->header = header;
      r->header_known = true;
      v1::RecordStreamMessage message;
      *message.mutable_header() = header;
      for (auto& f : r->feeds) f->Push(message);
    }
    if (r->spooled) {
      if (auto st = ring_->AppendOpened(header); !st.ok())
        spdlog::error("session {}: {}", s.session(), std::string(st.message()));
    }
  };
  r->sink = std::make_unique<Sink>(this, r.get());
  Shared* owner = &shared;
  auto finished = [this, r, owner](absl::StatusOr<v1::FileTrailer> result,
                                   const std::string& reason) {
    Finish(r, std::move(result), reason.empty() && owner->own_reason ? owner->own_reason() : reason);
    UpdateRate(*owner);
  };
  // Joining a recorder that already samples: only commands that start from now on, as a lone
  // session would have; the recorder's first sessions take everything it sampled.
  const uint64_t keep_from = recording_now ? start_mono : 0;
  if (!shared.fan_out.Join(s, r->sink.get(), keep_from, end_mono, finished, opened)) return false;
  spdlog::info("session {}: recording {}/{}, 1 in {}, salt {}", s.session(), RoleName(config_.role),
               TransportName(config_.transport), s.sample_rate(), s.salt());
  if (shared.set_rate) {
    if (auto st = shared.set_rate(shared.fan_out.FinestRate()); !st.ok())
      spdlog::error("session {}: {}", s.session(), std::string(st.message()));
  }
  r->started.set_value(header);
  return true;
}

void Recordings::UpdateRate(Shared& shared) {
  std::lock_guard lock(shared.mu);
  const uint32_t rate = shared.fan_out.FinestRate();
  if (shared.set_rate && rate != 0) {
    if (auto st = shared.set_rate(rate); !st.ok()) spdlog::error("{}", std::string(st.message()));
  }
}

namespace {
// A recorder's notes in the agent's log, under its session.
std::function<void(const std::string&)> SessionLog(const std::string& session) {
  return [session](const std::string& line) { spdlog::info("session {}: {}", session, line); };
}
}  // namespace

// The kernel's BPF programs, or the SPDK processes the agent was given (--spdk): same settings,
// same sinks, same spool.
void Recordings::RunShared(std::shared_ptr<Shared> shared, v1::RecordingSettings s) {
  if (!config_.spdk.empty()) {
    spdk::SpdkRecordingOptions o;
    o.role = config_.role == Role::kTarget ? spdk::SpdkRole::kTarget : spdk::SpdkRole::kHost;
    o.targets = config_.spdk;
    o.transport = config_.transport;
    o.sample_rate = s.sample_rate();
    o.salt = s.salt();
    o.interval_s = config_.interval_s;
    o.session_name = s.session();
    RunSharedWith(shared, spdk::SpdkRecorder::Start(o, SessionLog(s.session())));
    return;
  }
  RecordingOptions o;
  o.session.role = config_.role;
  o.session.transport = config_.transport;
  o.session.sample_rate = s.sample_rate();
  o.session.salt = s.salt();
  o.session.device = shared->device;
  o.session.btf_path = config_.btf_path;
  o.interval_s = config_.interval_s;
  o.session_name = s.session();
  o.on_note = SessionLog(s.session());
  RunSharedWith(shared, Recorder::Start(o, *facts_));
}

template <typename AnyRecorder>
void Recordings::RunSharedWith(std::shared_ptr<Shared> shared,
                               absl::StatusOr<std::unique_ptr<AnyRecorder>> recorder) {
  if (!recorder.ok()) {
    std::vector<std::shared_ptr<Recording>> waiting;
    {
      std::lock_guard lock(shared->mu);
      waiting.swap(shared->waiting);
    }
    for (auto& r : waiting) Fail(r, recorder.status());
    shared->done = true;
    return;
  }
  AnyRecorder* rec = recorder->get();
  {
    std::lock_guard lock(shared->mu);
    shared->header = rec->header();
    shared->attached = true;
    if constexpr (requires { rec->SetSampleRate(1u); }) {
      shared->set_rate = [rec](uint32_t rate) { return rec->SetSampleRate(rate); };
    }
    shared->own_reason = [rec] { return rec->stop_reason(); };
    for (auto& r : shared->waiting) OpenLocked(*shared, r, false);
    shared->waiting.clear();
  }
  absl::Status st = rec->Run(shared->fan_out, shared->fan_out.stop());
  if (!st.ok()) shared->fan_out.Fail(st, rec->stop_reason());
  {
    std::lock_guard lock(shared->mu);
    shared->set_rate = nullptr;  // the recorder goes with this thread
    shared->own_reason = nullptr;
  }
  shared->done = true;
}

void Recordings::Fail(std::shared_ptr<Recording> r, const absl::Status& error) {
  const std::string& session = r->settings.session();
  spdlog::error("session {}: cannot record: {}", session, std::string(error.message()));
  if (r->spooled) {
    if (auto st = ring_->AppendClosed(session, nullptr, std::string(error.message())); !st.ok())
      spdlog::error("{}", std::string(st.message()));
  }
  r->started.set_value(error);
  Finish(r, error, "");
}

void Recordings::Finish(std::shared_ptr<Recording> r, absl::StatusOr<v1::FileTrailer> result,
                        const std::string& reason) {
  const std::string& session = r->settings.session();
  std::vector<std::shared_ptr<RecordFeed>> feeds;
  {
    std::lock_guard lock(r->mu);
    feeds = r->feeds;
  }
  for (auto& f : feeds) f->Close();
  if (r->sink) {
    spdlog::info("session {}: {}, {} records in {} batches{}", session, r->StopReason(reason),
                 r->sink->records(), r->sink->batches(),
                 result.ok() ? "" : absl::StrCat(", failed: ", std::string(result.status().message())));
  }
  {
    std::lock_guard lock(mu_);
    AddLosses(r->losses, &finished_losses_);
    running_.erase(session);
    r->done = true;
  }
  std::error_code ec;
  if (r->spooled) std::filesystem::remove(MarkerOf(session), ec);
  r->finished.set_value(std::move(result));
}

void Recordings::Publish(Recording& r, const std::function<v1::RecordStreamMessage()>& make) {
  std::lock_guard lock(r.mu);
  if (r.feeds.empty()) return;
  const v1::RecordStreamMessage message = make();
  for (auto& f : r.feeds) f->Push(message);
}

void Recordings::ReapLocked() {
  for (auto it = finished_.begin(); it != finished_.end();) {
    if (!(*it)->done) {
      ++it;
      continue;
    }
    if ((*it)->thread.joinable()) (*it)->thread.join();
    it = finished_.erase(it);
  }
  if (shared_ && shared_->done) {
    if (shared_->thread.joinable()) shared_->thread.join();
    shared_.reset();
  }
}

void Recordings::StartForCollector(const v1::RecordingSettings& settings) {
  {
    // A repeated start (a reconnect raced the hello's recording_sessions): keep recording; an
    // error answer would close the session's file at the collector.
    std::lock_guard lock(mu_);
    if (running_.count(settings.session()) != 0) return;
  }
  auto r = Launch(settings, true);
  if (r.ok()) return;
  spdlog::error("session {}: {}", settings.session(), std::string(r.status().message()));
  if (auto st = ring_->AppendClosed(settings.session(), nullptr, std::string(r.status().message()));
      !st.ok())
    spdlog::error("{}", std::string(st.message()));
}

absl::StatusOr<v1::FileHeader> Recordings::StartLocal(const v1::RecordingSettings& settings) {
  auto r = Launch(settings, false);
  if (!r.ok()) return r.status();
  return (*r)->started.get_future().get();
}

absl::StatusOr<v1::FileTrailer> Recordings::Stop(const std::string& session,
                                                 const std::string& reason) {
  std::shared_ptr<Recording> r;
  {
    std::lock_guard lock(mu_);
    auto it = running_.find(session);
    if (it == running_.end()) {
      return absl::NotFoundError(
          absl::StrCat("no recording of session '", session, "' is running on this agent"));
    }
    r = it->second;
  }
  r->RequestStop(reason);
  if (std::shared_ptr<Shared> owner = r->owner) {
    bool was_waiting = false;
    {
      std::lock_guard lock(owner->mu);
      was_waiting = std::erase(owner->waiting, r) != 0;
    }
    if (was_waiting) {  // the recorder is still attaching: it never recorded for this session
      Finish(r, absl::CancelledError("stopped before the recording started"), "");
    } else {
      owner->fan_out.Leave(session);
    }
  }
  auto result = r->finished_future.get();
  std::lock_guard lock(mu_);
  ReapLocked();
  return result;
}

void Recordings::StopAll(const std::string& reason) {
  for (const std::string& name : Running()) (void)Stop(name, reason);
  std::vector<std::shared_ptr<Shared>> recorders;
  {
    std::lock_guard lock(mu_);
    recorders.swap(finished_);
    if (shared_) recorders.push_back(std::move(shared_));
  }
  // Outside the lock: a recorder's last callbacks take it.
  for (auto& shared : recorders) {
    if (shared->thread.joinable()) shared->thread.join();
  }
}

std::vector<std::string> Recordings::Running() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, r] : running_) names.push_back(name);
  return names;
}

std::vector<std::string> Recordings::CollectorSessions() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, r] : running_) {
    if (r->spooled) names.push_back(name);
  }
  return names;
}

v1::LossCounters Recordings::Losses() const {
  std::lock_guard lock(mu_);
  v1::LossCounters total = finished_losses_;
  for (const auto& [name, r] : running_) {
    std::lock_guard rlock(r->mu);
    AddLosses(r->losses, &total);
  }
  // Counted once for the agent (this run), not per recording.
  total.set_spool_full(ring_->Stats().spool_full_lost);
  return total;
}

absl::StatusOr<std::shared_ptr<RecordFeed>> Recordings::Subscribe(const std::string& session) {
  std::lock_guard lock(mu_);
  auto it = session.empty() ? running_.begin() : running_.find(session);
  if (it == running_.end()) {
    return absl::NotFoundError(
        session.empty() ? "no recording is running on this agent"
                        : absl::StrCat("no recording of session '", session, "' is running"));
  }
  auto feed = std::make_shared<RecordFeed>();
  Recording& r = *it->second;
  std::lock_guard rlock(r.mu);
  if (r.header_known) {
    v1::RecordStreamMessage header;
    *header.mutable_header() = r.header;
    feed->Push(header);
  }
  r.feeds.push_back(feed);
  return feed;
}

}  // namespace ntprof::agent
