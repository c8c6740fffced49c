#include "session_registry.h"

#include <time.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "file_sink.h"
#include "fleet_feed.h"
#include "metrics_sink.h"
#include "raw_records.h"
#include "record_check.h"
#include "session_settings.h"
#include "session_store.h"
#include "spdlog/spdlog.h"
#include "watch_sink.h"

namespace ntprof::collector {
namespace {

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void AddAgent(v1::SessionInfo* info, const std::string& hostname, v1::Role role) {
  v1::SessionAgent* a = info->add_agents();
  a->set_hostname(hostname);
  a->set_role(role);
}

absl::Status NoSuchSession(const std::string& name) {
  return absl::NotFoundError(
      absl::StrCat("no session named '", name, "'; `ntprofctl status` lists the sessions"));
}

std::string StateName(v1::SessionState state) {
  return state == v1::SESSION_RUNNING ? "running" : "stopped";
}

}  // namespace

SessionRegistry::SessionRegistry(RegistryOptions options, CollectorMetrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      watch_(options_.watch_queue),
      sequences_(options_.data_dir / "agents"),
      shards_(std::make_unique<JoinShards>(options_.join_threads)) {
  if (!options_.wall_clock_ns) options_.wall_clock_ns = RealtimeNs;
  sink_owners_.push_back(std::make_unique<FileSink>());  // first: a batch not written is not acked
  sink_owners_.push_back(std::make_unique<MetricsSink>(metrics_));
  sink_owners_.push_back(std::make_unique<WatchSink>(&watch_));
  if (options_.fleet) {
    auto fleet =
        std::make_unique<FleetSink>(options_.fleet, metrics_, options_.join.window_ns);
    fleet_ = fleet.get();
    sink_owners_.push_back(std::move(fleet));
  }
  for (const auto& sink : sink_owners_) sinks_.push_back(sink.get());
}

SessionRegistry::~SessionRegistry() = default;

absl::StatusOr<std::unique_ptr<SessionRegistry>> SessionRegistry::Open(RegistryOptions options,
                                                                       CollectorMetrics* metrics) {
  std::unique_ptr<SessionRegistry> registry(new SessionRegistry(std::move(options), metrics));
  std::error_code ec;
  for (const char* sub : {"sessions", "agents"}) {
    std::filesystem::create_directories(registry->options_.data_dir / sub, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", (registry->options_.data_dir / sub).string(), ": ",
                       ec.message(), "; pass --data-dir with a writable directory"));
    }
  }
  auto salt = FleetSalt(registry->options_.data_dir, registry->options_.fleet_salt);
  if (!salt.ok()) return salt.status();
  registry->fleet_salt_ = *salt;
  if (auto st = registry->Load(); !st.ok()) return st;
  if (auto st = registry->OpenStanding(); !st.ok()) return st;
  return registry;
}

std::unique_ptr<Session> SessionRegistry::NewSession(v1::SessionInfo info) {
  const std::filesystem::path dir = options_.data_dir / "sessions" / info.name();
  return std::make_unique<Session>(std::move(info), dir, shards_.get(), options_.join, sinks_);
}

absl::Status SessionRegistry::Load() {
  std::error_code ec;
  std::map<AgentKey, std::set<uint64_t>> held;
  for (const auto& dir : std::filesystem::directory_iterator(options_.data_dir / "sessions", ec)) {
    std::optional<v1::SessionInfo> info = ReadSessionInfo(dir.path());
    if (!info) {
      spdlog::warn("{}: no readable session.pb; ignoring this directory", dir.path().string());
      continue;
    }
    auto session = NewSession(std::move(*info));
    if (auto st = session->files->Recover(&held); !st.ok()) return st;
    if (fleet_ && (session->running() || FleetPending(dir.path()))) {
      fleet_->Reload(*session, Now());
    }
    sessions_[session->name()] = std::move(session);
  }
  sequences_.Load(held);
  if (!sessions_.empty()) {
    spdlog::info("recovered {} session(s) from {}", sessions_.size(), options_.data_dir.string());
  }
  return absl::OkStatus();
}

absl::Status SessionRegistry::OpenStanding() {
  const std::string& name = options_.standing.session();
  for (auto& [other, session] : sessions_) {
    if (!session->info.standing() || !session->running() || other == name) continue;
    session->notes.push_back("no longer the collector's standing session (--standing-session)");
    StopLocked(session.get());
  }
  if (name.empty()) return absl::OkStatus();
  auto configured = NewSessionSettings(name, options_.standing, fleet_salt_);
  if (!configured.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--standing-session: ", configured.status().message()));
  }
  configured->set_duration_s(0);  // it has no end
  if (auto it = sessions_.find(name); it != sessions_.end()) {
    const Session& stored = *it->second;
    if (!stored.info.standing() || !stored.running()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--standing-session ", name, ": a session of that name exists and is not a running ",
          "standing session; choose another name"));
    }
    if (stored.settings().SerializeAsString() != configured->SerializeAsString()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--standing-session ", name, ": stored as {", stored.settings().ShortDebugString(),
          "}, configured as {", configured->ShortDebugString(), "}; a standing session keeps ",
          "its settings for its name: configure another name (the stored one keeps its records)"));
    }
    return absl::OkStatus();
  }
  v1::SessionInfo info;
  info.set_name(name);
  info.set_state(v1::SESSION_RUNNING);
  info.set_standing(true);
  *info.mutable_settings() = *configured;
  info.set_start_wall_ns(static_cast<uint64_t>(Now()));
  auto session = NewSession(std::move(info));
  if (auto st = Persist(*session); !st.ok()) return st;
  if (fleet_) {
    if (auto st = fleet_->OweRows(*session); !st.ok()) return st;
  }
  spdlog::info("standing session {}: 1 in {}", name, configured->sample_rate());
  sessions_[name] = std::move(session);
  return absl::OkStatus();
}

absl::Status SessionRegistry::Persist(const Session& session) const {
  return WriteSessionInfo(options_.data_dir / "sessions" / session.name(), session.info);
}

void SessionRegistry::SendStart(const Session& session, const ConnectedAgentEntry& agent,
                                v1::Role role) const {
  v1::CollectorMessage start;
  *start.mutable_start()->mutable_settings() = SettingsForAgent(session, role, Now());
  agent.channel->Send(start);
}

// ---- agents -------------------------------------------------------------------------------------

absl::StatusOr<v1::Welcome> SessionRegistry::AttachAgent(AgentChannel* channel,
                                                         const v1::AgentHello& hello,
                                                         const std::string& peer) {
  if (auto st = AgentRoster::CheckHello(hello); !st.ok()) {
    metrics_->Add(Counter::kBadAgentMessages);
    return st;
  }
  std::lock_guard lock(mu_);
  const ConnectedAgentEntry& agent = agents_.Attach(channel, hello, peer);
  v1::Welcome welcome;
  welcome.set_acked_seq(sequences_.Of(agent.key).acked());
  welcome.set_collector_version(NTPROF_VERSION);
  v1::CollectorMessage first;  // the contract: Welcome before anything else
  *first.mutable_welcome() = welcome;
  channel->Send(first);
  spdlog::info("agent {} ({}) connected from {}, epoch {:x}, acked {}", hello.hostname(),
               RoleName(hello.role()), peer, hello.stream_epoch(), welcome.acked_seq());
  // The standing session takes every agent that connects.
  if (auto it = sessions_.find(standing_session()); it != sessions_.end() && it->second->running()) {
    Session& standing = *it->second;
    const size_t agents = static_cast<size_t>(standing.info.agents_size());
    standing.AgentEntry(hello.hostname(), hello.role());
    if (static_cast<size_t>(standing.info.agents_size()) != agents) {
      if (auto st = Persist(standing); !st.ok()) spdlog::error("{}", st.ToString());
    }
  }
  // Running sessions that chose this agent and that it is not recording (it restarted): resume,
  // with the settings as stored.
  const std::set<std::string> recording(hello.recording_sessions().begin(),
                                        hello.recording_sessions().end());
  // The standing session first: it is the broadest (no device of an investigation's narrows the
  // agent's recorder before it).
  std::vector<const Session*> order;
  for (const auto& [name, session] : sessions_) {
    if (session->info.standing()) order.insert(order.begin(), session.get());
    else order.push_back(session.get());
  }
  for (const Session* session : order) {
    const std::string& name = session->name();
    if (!session->running() || recording.count(name) != 0) continue;
    for (const auto& a : session->info.agents()) {
      // A refusal is the agent's answer for this session: asking again would only repeat it.
      if (a.hostname() != hello.hostname() || !a.refusal().empty()) continue;
      SendStart(*session, agent, a.role());
    }
  }
  return welcome;
}

void SessionRegistry::DetachAgent(AgentChannel* channel) {
  std::lock_guard lock(mu_);
  const std::string hostname = agents_.Detach(channel);
  if (!hostname.empty()) spdlog::info("agent {} disconnected", hostname);
}

void SessionRegistry::NoteLost(const AgentKey& agent, const v1::SequenceGap& gap) {
  sequences_.DeclareLost(agent, gap);
  for (auto& [name, session] : sessions_) {
    if (!session->running()) continue;
    for (const auto& a : session->info.agents()) {
      if (a.hostname() != agent.hostname) continue;
      session->notes.push_back(absl::StrCat(agent.hostname, " lost batches ", gap.first(), "..",
                                            gap.last(), " (", gap.reason(), ")"));
    }
  }
}

absl::StatusOr<v1::Ack> SessionRegistry::Ingest(AgentChannel* channel, v1::AgentMessage message) {
  std::lock_guard lock(mu_);
  const ConnectedAgentEntry* agent = agents_.Find(channel);
  if (!agent) {
    metrics_->Add(Counter::kBadAgentMessages);
    return absl::FailedPreconditionError("the first message on Connect must be AgentHello");
  }
  SequenceTracker& tracker = sequences_.Of(agent->key);
  v1::Ack ack;
  if (message.has_gap()) {
    metrics_->Add(Counter::kSequenceLost, message.gap().last() - message.gap().first() + 1);
    NoteLost(agent->key, message.gap());
    ack.set_seq(tracker.acked());
    return ack;
  }
  if (message.has_hello() || message.seq() == 0) {
    metrics_->Add(Counter::kBadAgentMessages);
    return absl::InvalidArgumentError(
        "after AgentHello, every message needs seq >= 1 (opened, batch, closed) or is a gap");
  }
  if (tracker.Holds(message.seq())) {
    metrics_->Add(Counter::kDuplicateMessages);
    tracker.Accept(message.seq());  // counts the duplicate
    ack.set_seq(tracker.acked());
    return ack;
  }
  const uint64_t seq = message.seq();
  if (auto st = Store(*agent, message); !st.ok()) {
    // Not held: no ack past it, the agent replays it after a reconnect.
    metrics_->Add(Counter::kStoreErrors);
    return st;
  }
  tracker.Accept(seq);
  ack.set_seq(tracker.acked());
  return ack;
}

// Returns an error only when the disk failed (worth a replay); unusable input is counted and
// dropped so that it never blocks the stream.
absl::Status SessionRegistry::Store(const ConnectedAgentEntry& agent, v1::AgentMessage& message) {
  const std::string& name = message.has_opened()   ? message.opened().header().session()
                            : message.has_batch()  ? message.batch().session()
                            : message.has_closed() ? message.closed().session()
                                                   : std::string();
  auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    metrics_->Add(Counter::kUnknownSession);
    spdlog::warn("agent {} sent a message for unknown session '{}': dropped",
                 agent.hello.hostname(), name);
    return sequences_.RememberDropped(agent.key, message.seq());
  }
  Session& session = *it->second;
  if (message.has_opened()) {
    v1::FileHeader header = message.opened().header();
    header.set_hostname(agent.hello.hostname());  // the stream's identity wins
    v1::SessionAgent* entry = session.AgentEntry(agent.hello.hostname(), header.role());
    if (!entry->opened()) {
      entry->set_opened(true);
      if (auto st = Persist(session); !st.ok()) spdlog::error("{}", st.ToString());
    }
    return session.files->Open(agent.key, header, message.seq());
  }
  if (message.has_closed()) {
    if (!message.closed().error().empty()) RecordFailure(&session, agent, message.closed().error());
    if (!session.files->HasHeader(agent.key)) return sequences_.RememberDropped(agent.key, message.seq());
    if (auto st = session.files->Close(agent.key, message.closed().trailer(), message.seq());
        !st.ok()) {
      return st;
    }
    // `ntprofctl run` waits for this before it reports: the agent's last batches are in.
    v1::SessionAgent* entry = session.AgentEntry(agent.hello.hostname(), agent.hello.role());
    if (!entry->closed()) {
      entry->set_closed(true);
      if (auto st = Persist(session); !st.ok()) spdlog::error("{}", st.ToString());
    }
    return absl::OkStatus();
  }
  if (message.has_batch()) {
    if (!session.files->HasHeader(agent.key)) {
      metrics_->Add(Counter::kBadAgentMessages);
      spdlog::warn("agent {}: batch for session '{}' before SessionOpened: dropped",
                   agent.hello.hostname(), name);
      return sequences_.RememberDropped(agent.key, message.seq());
    }
    v1::SessionBatch* batch = message.mutable_batch();
    batch->mutable_batch()->set_seq(message.seq());
    return StoreBatch(agent, &session, batch);
  }
  metrics_->Add(Counter::kBadAgentMessages);
  return sequences_.RememberDropped(agent.key, message.seq());
}

// Drops impossible records from *batch, hands it to every sink (the files first), then feeds the
// live join.
absl::Status SessionRegistry::StoreBatch(const ConnectedAgentEntry& agent, Session* session,
                                         v1::SessionBatch* batch) {
  // An agent ships records as its BPF programs wrote them: converted here, off its machine.
  if (absl::Status raw = ExpandRawRecords(batch->mutable_batch()); !raw.ok()) {
    metrics_->Add(Counter::kBadAgentMessages);
    spdlog::warn("agent {}: batch {} of session '{}': its records are dropped: {}",
                 agent.hello.hostname(), batch->batch().seq(), batch->session(), raw.ToString());
    // all three: a layout number left behind would make the session's own file unreadable
    batch->mutable_batch()->clear_raw_records();
    batch->mutable_batch()->clear_identities();
    batch->mutable_batch()->clear_raw_layout();
  }
  auto* records = batch->mutable_batch()->mutable_records();
  const int64_t now = Now();
  int kept = 0;
  for (int i = 0; i < records->size(); ++i) {
    v1::Record& r = (*records)[i];
    if (auto why = ImpossibleRecord(r)) {
      metrics_->Add(Counter::kRecordsRejected);
      spdlog::debug("agent {}: record refused: {}", agent.hello.hostname(), *why);
      continue;
    }
    r.set_agent(agent.hello.hostname());
    if (kept != i) records->SwapElements(kept, i);
    ++kept;
  }
  records->DeleteSubrange(kept, records->size() - kept);
  for (SessionSink* sink : sinks_) {
    if (auto st = sink->OnBatch(*session, agent.key, batch->batch()); !st.ok()) return st;
  }
  if (batch->batch().has_losses()) session->losses[agent.key] = batch->batch().losses();
  session->joins->Submit(records, now);
  return absl::OkStatus();
}

// ---- sessions -----------------------------------------------------------------------------------

absl::StatusOr<v1::SessionInfo> SessionRegistry::StartSession(const v1::StartSessionRequest& req) {
  auto refuse = [this](absl::Status status) {
    metrics_->Add(Counter::kRequestsRejected);
    return status;
  };
  auto settings = NewSessionSettings(req.name(), req.settings(), fleet_salt_);
  if (!settings.ok()) return refuse(settings.status());
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(req.name()); it != sessions_.end()) {
    return refuse(absl::AlreadyExistsError(
        absl::StrCat("session '", req.name(), "' already exists (",
                     StateName(it->second->info.state()), "); choose another name")));
  }
  v1::SessionInfo info;
  info.set_name(req.name());
  info.set_state(v1::SESSION_RUNNING);
  *info.mutable_settings() = *settings;
  info.set_start_wall_ns(static_cast<uint64_t>(Now()));

  // Selection: the named agents (each must be connected with that role), else all of the role.
  std::vector<std::string> missing;
  auto select = [&](const google::protobuf::RepeatedPtrField<std::string>& names, v1::Role role) {
    if (names.empty()) {
      agents_.ForEach([&](const ConnectedAgentEntry& agent) {
        if (agent.hello.role() == role) AddAgent(&info, agent.hello.hostname(), role);
      });
      return;
    }
    for (const std::string& name : names) {
      const ConnectedAgentEntry* agent = agents_.Find(name);
      if (!agent || agent->hello.role() != role) {
        missing.push_back(absl::StrCat(name, " (", RoleName(role), ")"));
      } else {
        AddAgent(&info, name, role);
      }
    }
  };
  select(req.hosts(), v1::ROLE_HOST);
  select(req.targets(), v1::ROLE_TARGET);
  if (!missing.empty()) {
    return refuse(absl::NotFoundError(absl::StrCat("not connected: ", absl::StrJoin(missing, ", "),
                                                   "; connected agents: ", agents_.Describe())));
  }
  if (info.agents_size() == 0) {
    return refuse(absl::FailedPreconditionError(
        "no agents connected; start ntprofd with --collector pointing at this collector on the "
        "hosts and targets, then check `ntprofctl status`"));
  }
  auto session = NewSession(info);
  if (auto st = Persist(*session); !st.ok()) return st;
  if (fleet_) {
    if (auto st = fleet_->OweRows(*session); !st.ok()) return st;
  }
  for (const auto& a : info.agents()) {
    if (const ConnectedAgentEntry* agent = agents_.Find(a.hostname())) {
      SendStart(*session, *agent, a.role());
    }
  }
  spdlog::info("session {} started on {} agent(s), 1 in {}", info.name(), info.agents_size(),
               info.settings().sample_rate());
  Session& stored = *session;
  sessions_[info.name()] = std::move(session);
  return InfoOf(stored);
}

void SessionRegistry::StopLocked(Session* session) {
  if (!session->running()) return;
  session->info.set_state(v1::SESSION_STOPPED);
  session->info.set_stop_wall_ns(static_cast<uint64_t>(Now()));
  session->joins->Flush();
  metrics_->Add(Counter::kWatchUpdatesDropped, watch_.EndSession(session->name(), Now()));
  if (auto st = Persist(*session); !st.ok()) spdlog::error("{}", st.ToString());
  v1::CollectorMessage stop;
  stop.mutable_stop()->set_session(session->name());
  for (const auto& a : session->info.agents()) {
    if (!a.refusal().empty()) continue;  // it records nothing of this session
    if (const ConnectedAgentEntry* agent = agents_.Find(a.hostname())) agent->channel->Send(stop);
  }
  spdlog::info("session {} stopped", session->name());
}

// An agent that answers a start with an error before opening its recording refused the session:
// its entry keeps why (persisted, shown by status and the report). The session goes on with the
// agents that record; once every agent refused, nothing will ever arrive, so it stops rather than
// show "running" forever.
void SessionRegistry::RecordFailure(Session* session, const ConnectedAgentEntry& agent,
                                    const std::string& why) {
  v1::SessionAgent* entry = session->AgentEntry(agent.hello.hostname(), agent.hello.role());
  if (entry->opened()) {  // it recorded, then failed
    session->notes.push_back(absl::StrCat(agent.hello.hostname(), " could not record: ", why));
    return;
  }
  entry->set_refusal(why);
  const bool all_refused =
      std::all_of(session->info.agents().begin(), session->info.agents().end(),
                  [](const v1::SessionAgent& a) { return !a.refusal().empty(); });
  if (all_refused && session->running()) {
    session->notes.push_back("every agent refused the session: nothing was recorded");
    StopLocked(session);
    return;
  }
  if (auto st = Persist(*session); !st.ok()) spdlog::error("{}", st.ToString());
}

absl::Status SessionRegistry::Watchable(const std::string& name) const {
  if (name.empty()) return absl::OkStatus();
  std::lock_guard lock(mu_);
  auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    metrics_->Add(Counter::kRequestsRejected);
    return NoSuchSession(name);
  }
  if (!it->second->running()) {
    metrics_->Add(Counter::kRequestsRejected);
    return absl::FailedPreconditionError(
        absl::StrCat("session '", name, "' is stopped: nothing more to watch; `ntprofctl report ",
                     name, "` shows what it recorded"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SessionInfo> SessionRegistry::StopSession(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    metrics_->Add(Counter::kRequestsRejected);
    return NoSuchSession(name);
  }
  if (it->second->info.standing() && it->second->running()) {
    metrics_->Add(Counter::kRequestsRejected);
    return absl::FailedPreconditionError(absl::StrCat(
        "session '", name, "' is the collector's standing session: it runs while the collector ",
        "is configured with --standing-session ", name, "; restart the collector without it to ",
        "end it"));
  }
  StopLocked(it->second.get());
  return InfoOf(*it->second);
}

v1::SessionInfo SessionRegistry::InfoOf(const Session& session) const {
  v1::SessionInfo info = session.info;
  for (auto& a : *info.mutable_agents()) {
    const SessionFiles::Totals totals = session.files->TotalsOf(a.hostname());
    a.set_records(totals.records);
    a.set_batches(totals.batches);
    a.set_connected(agents_.Find(a.hostname()) != nullptr);
    for (const auto& [key, losses] : session.losses) {
      if (key.hostname == a.hostname()) *a.mutable_losses() = losses;
    }
  }
  const JoinStats stats = session.joins->Stats();
  info.set_matched(stats.matched);
  info.set_host_only(stats.host_only);
  info.set_target_only(stats.target_only);
  for (const std::string& note : session.notes) info.add_notes(note);
  return info;
}


v1::ListSessionsReply SessionRegistry::List() const {
  std::lock_guard lock(mu_);
  v1::ListSessionsReply reply;
  for (const auto& [name, session] : sessions_) *reply.add_sessions() = InfoOf(*session);
  agents_.ForEach([&](const ConnectedAgentEntry& agent) {
    v1::ConnectedAgent* a = reply.add_agents();
    a->set_hostname(agent.hello.hostname());
    a->set_role(agent.hello.role());
    a->set_transport(agent.hello.transport());
    a->set_agent_version(agent.hello.agent_version());
    a->set_peer(agent.peer);
    if (const SequenceTracker* seq = sequences_.Find(agent.key)) {
      a->set_acked_seq(seq->acked());
      a->set_duplicates(seq->duplicates());
      a->set_gaps(seq->lost());
    }
  });
  return reply;
}

absl::StatusOr<StoredSession> SessionRegistry::Stored(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    metrics_->Add(Counter::kRequestsRejected);
    return NoSuchSession(name);
  }
  StoredSession stored{name, it->second->running(), it->second->files->Files(),
                       it->second->notes};
  for (const auto& a : it->second->info.agents()) {
    if (!a.refusal().empty()) {
      stored.notes.push_back(absl::StrCat(a.hostname(), " refused to record: ", a.refusal()));
    }
  }
  return stored;
}

void SessionRegistry::Tick() {
  const int64_t now = Now();
  std::lock_guard lock(mu_);
  size_t pending = 0, running = 0;
  for (auto& [name, session] : sessions_) {
    if (!session->running()) continue;
    const size_t session_pending = session->joins->Expire(now);
    if (const int64_t end = session->EndNs(); end != 0 && now >= end) {
      StopLocked(session.get());
      continue;
    }
    pending += session_pending;
    ++running;
  }
  if (fleet_) fleet_->Tick(sessions_, now);
  metrics_->Add(Counter::kWatchUpdatesDropped, watch_.Tick(now));
  metrics_->SetGauge(Gauge::kSessionsRunning, static_cast<double>(running));
  metrics_->SetGauge(Gauge::kAgentsConnected, static_cast<double>(agents_.size()));
  metrics_->SetGauge(Gauge::kJoinPending, static_cast<double>(pending));
  metrics_->SetGauge(Gauge::kWatchClients, static_cast<double>(watch_.clients()));
}

}  // namespace ntprof::collector
