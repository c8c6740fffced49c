#include "recordings.h"

#include <algorithm>
#include <fstream>
#include <future>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "loss_counters.h"
#include "recorder.h"
#include "spdk_recorder.h"
#include "spdlog/spdlog.h"

namespace ntprof::agent {

struct Recordings::Recording {
  v1::RecordingSettings settings;
  bool spooled = false;              // started by the collector
  uint64_t spool_full_at_start = 0;  // the spool's loss is counted per recording from its start
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::thread thread;
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
  // The recorder's own reason (duration elapsed, device gone) unless it was asked to stop.
  template <typename AnyRecorder>  // Recorder (kernel) or spdk::SpdkRecorder
  std::string StopReason(const AnyRecorder& recorder) {
    if (!stop) return recorder.stop_reason();
    std::lock_guard lock(mu);
    return stop_reason;
  }
};

namespace {

// A session that names subsystems keeps only their commands: the others never leave the agent.
// (The batch's device counters still count every command of the watched devices.)
void KeepSubsystems(const google::protobuf::RepeatedPtrField<std::string>& keep,
                    v1::RecordBatch* batch) {
  if (keep.empty()) return;
  auto* records = batch->mutable_records();
  auto kept_end = std::remove_if(records->begin(), records->end(), [&](const v1::Record& r) {
    return std::find(keep.begin(), keep.end(), r.subsys_nqn()) == keep.end();
  });
  records->erase(kept_end, records->end());
}

}  // namespace

// Where a recording's batches go: the spool (collector recordings) and the Record callers.
class Recordings::Sink : public BatchSink {
 public:
  Sink(Recordings* owner, Recording* recording) : owner_(owner), recording_(recording) {}

  absl::Status WriteBatch(const v1::RecordBatch& batch) override {
    v1::RecordBatch b = batch;
    KeepSubsystems(recording_->settings.subsystems(), &b);
    // The spool's loss is the agent's, not the kernel's: it rides in-band with every batch.
    b.mutable_losses()->set_spool_full(SpoolLoss());
    {
      std::lock_guard lock(recording_->mu);
      recording_->losses = b.losses();
    }
    records_ += static_cast<uint64_t>(b.records_size());
    ++batches_;
    if (recording_->spooled) {
      // Split over the collectors by the ring; each spool numbers its share.
      if (auto st = owner_->ring_->AppendBatch(recording_->settings.session(), b); !st.ok())
        return st;
    }
    v1::RecordStreamMessage out;
    *out.mutable_batch() = std::move(b);
    owner_->Publish(*recording_, out);
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
    v1::RecordStreamMessage out;
    *out.mutable_trailer() = t;
    owner_->Publish(*recording_, out);
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
  if (settings.sample_rate() == 0)
    return absl::InvalidArgumentError("sample rate N must be at least 1");
  if (settings.devices_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("one device per agent recording (got ",
                                                   absl::StrJoin(settings.devices(), ", "), ")"));
  }
  std::lock_guard lock(mu_);
  ReapLocked();
  if (!running_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("already recording session ", running_.begin()->first,
                     "; stop it first (one recording at a time per agent)"));
  }
  auto r = std::make_shared<Recording>();
  r->settings = settings;
  r->spooled = spooled;
  r->spool_full_at_start = ring_->Stats().spool_full_lost;
  r->finished_future = r->finished.get_future().share();
  if (spooled) std::ofstream(MarkerOf(name)).close();
  running_[name] = r;
  r->thread = std::thread([this, r] { Run(r); });
  return r;
}

// The kernel's BPF programs, or the SPDK processes the agent was given (--spdk): same settings,
// same sink, same spool.
void Recordings::Run(std::shared_ptr<Recording> r) {
  const v1::RecordingSettings& s = r->settings;
  if (!config_.spdk.empty()) {
    spdk::SpdkRecordingOptions o;
    o.role = config_.role == Role::kTarget ? spdk::SpdkRole::kTarget : spdk::SpdkRole::kHost;
    o.targets = config_.spdk;
    o.transport = config_.transport;
    o.sample_rate = s.sample_rate();
    o.salt = s.salt();
    o.duration_s = s.duration_s();
    o.interval_s = config_.interval_s;
    o.session_name = s.session();
    RunWith(r, spdk::SpdkRecorder::Start(o, [session = s.session()](const std::string& line) {
              spdlog::info("session {}: {}", session, line);
            }));
    return;
  }
  RecordingOptions o;
  o.session.role = config_.role;
  o.session.transport = config_.transport;
  o.session.sample_rate = s.sample_rate();
  o.session.salt = s.salt();
  o.session.device = s.devices_size() > 0 ? s.devices(0) : config_.device;
  o.session.btf_path = config_.btf_path;
  o.duration_s = s.duration_s();
  o.interval_s = config_.interval_s;
  o.session_name = s.session();
  RunWith(r, Recorder::Start(o, *facts_));
}

template <typename AnyRecorder>
void Recordings::RunWith(std::shared_ptr<Recording> r,
                         absl::StatusOr<std::unique_ptr<AnyRecorder>> recorder) {
  const v1::RecordingSettings& s = r->settings;
  auto finish = [&](absl::StatusOr<v1::FileTrailer> result) {
    std::vector<std::shared_ptr<RecordFeed>> feeds;
    {
      std::lock_guard lock(r->mu);
      feeds = r->feeds;
    }
    for (auto& f : feeds) f->Close();
    {
      std::lock_guard lock(mu_);
      AddLosses(r->losses, &finished_losses_);
      running_.erase(s.session());
      finished_.push_back(r);
      r->done = true;
    }
    std::error_code ec;
    if (r->spooled) std::filesystem::remove(MarkerOf(s.session()), ec);
    r->finished.set_value(std::move(result));
  };

  if (!recorder.ok()) {
    spdlog::error("session {}: cannot record: {}", s.session(),
                  std::string(recorder.status().message()));
    if (r->spooled) {
      if (auto st = ring_->AppendClosed(s.session(), nullptr,
                                        std::string(recorder.status().message()));
          !st.ok())
        spdlog::error("{}", std::string(st.message()));
    }
    r->started.set_value(recorder.status());
    finish(recorder.status());
    return;
  }
  {
    std::lock_guard lock(r->mu);
    r->header = (*recorder)->header();
    r->header_known = true;
    v1::RecordStreamMessage header;
    *header.mutable_header() = r->header;
    for (auto& f : r->feeds) f->Push(header);
  }
  if (r->spooled) {
    if (auto st = ring_->AppendOpened((*recorder)->header()); !st.ok())
      spdlog::error("session {}: {}", s.session(), std::string(st.message()));
  }
  spdlog::info("session {}: recording {}/{}, 1 in {}, salt {}", s.session(), RoleName(config_.role),
               TransportName(config_.transport), s.sample_rate(), s.salt());
  r->started.set_value((*recorder)->header());
  Sink sink(this, r.get());
  absl::Status st = (*recorder)->Run(sink, r->stop);
  spdlog::info("session {}: {}, {} records in {} batches{}", s.session(),
               r->StopReason(**recorder), sink.records(), sink.batches(),
               st.ok() ? "" : absl::StrCat(", failed: ", std::string(st.message())));
  if (st.ok()) {
    finish(sink.trailer());
  } else {
    finish(st);
  }
}

void Recordings::Publish(Recording& r, const v1::RecordStreamMessage& message) {
  std::lock_guard lock(r.mu);
  for (auto& f : r.feeds) f->Push(message);
}

void Recordings::ReapLocked() {
  for (auto& r : finished_) {
    if (r->thread.joinable()) r->thread.join();
  }
  finished_.clear();
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
  auto result = r->finished_future.get();
  std::lock_guard lock(mu_);
  ReapLocked();
  return result;
}

void Recordings::StopAll(const std::string& reason) {
  for (const std::string& name : Running()) (void)Stop(name, reason);
  std::lock_guard lock(mu_);
  ReapLocked();
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
