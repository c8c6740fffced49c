#include "session_registry.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "command_row.h"
#include "fleet_feed.h"
#include "loss_counters.h"
#include "record_check.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {
namespace {

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Session names become directory names: keep them to a safe alphabet.
bool ValidSessionName(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9_][A-Za-z0-9._-]{0,63}");
  return std::regex_match(name, kName);
}

std::string RoleName(v1::Role role) {
  return role == v1::ROLE_HOST ? "host" : role == v1::ROLE_TARGET ? "target" : "unknown";
}

void AddAgent(v1::SessionInfo* info, const std::string& hostname, v1::Role role) {
  v1::SessionAgent* a = info->add_agents();
  a->set_hostname(hostname);
  a->set_role(role);
}

uint64_t RandomSalt() {
  std::random_device rd;
  const uint64_t salt = (uint64_t{rd()} << 32) | rd();
  return salt == 0 ? 1 : salt;
}

absl::Status NoSuchSession(const std::string& name) {
  return absl::NotFoundError(
      absl::StrCat("no session named '", name, "'; `ntprofctl status` lists the sessions"));
}

std::string StateName(v1::SessionState state) {
  return state == v1::SESSION_RUNNING ? "running" : "stopped";
}

}  // namespace

struct SessionRegistry::Session {
  v1::SessionInfo info;  // what is persisted: settings, state, selected agents
  std::unique_ptr<SessionFiles> files;
  std::vector<std::unique_ptr<LiveJoin>> joins;  // one per shard, run only by JoinShards
  std::map<AgentKey, v1::LossCounters> losses;  // latest cumulative, per agent stream
  std::vector<std::string> notes;
  // The fleet store: outcomes of a reload reach ClickHouse only (not metrics or watch); the marker
  // file stays until the rows up to fleet_last_ticket were accepted and nothing was dropped.
  // Atomic: the join threads write rows while the registry's lock holder looks.
  std::atomic<bool> fleet_reloading = false;
  std::atomic<bool> fleet_pending = false;
  std::atomic<uint64_t> fleet_last_ticket = 0;
  std::mutex fleet_mu;  // marking and clearing the marker file
  uint64_t fleet_drops_at_start = 0;  // under fleet_mu

  bool running() const { return info.state() == v1::SESSION_RUNNING; }
  v1::SessionAgent* AgentEntry(const std::string& hostname, v1::Role role) {
    for (auto& a : *info.mutable_agents()) {
      if (a.hostname() == hostname) return &a;
    }
    v1::SessionAgent* a = info.add_agents();
    a->set_hostname(hostname);
    a->set_role(role);
    return a;
  }
};

SessionRegistry::SessionRegistry(RegistryOptions options, CollectorMetrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      watch_(options_.watch_queue),
      shards_(std::make_unique<JoinShards>(options_.join_threads)) {
  if (!options_.wall_clock_ns) options_.wall_clock_ns = RealtimeNs;
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
  if (auto st = registry->Load(); !st.ok()) return st;
  return registry;
}

std::unique_ptr<SessionRegistry::Session> SessionRegistry::NewSession(v1::SessionInfo info) {
  auto session = std::make_unique<Session>();
  session->info = std::move(info);
  session->files =
      std::make_unique<SessionFiles>(options_.data_dir / "sessions" / session->info.name());
  bool hosts = false, targets = false;
  for (const auto& a : session->info.agents()) {
    hosts |= a.role() == v1::ROLE_HOST;
    targets |= a.role() == v1::ROLE_TARGET;
  }
  const bool join_sides = hosts && targets;
  const std::string name = session->info.name();
  const uint32_t rate = session->info.sample_rate();
  Session* self = session.get();
  // Runs on the join threads (JoinShards): everything it touches is safe from several at once.
  const JoinEngine::Sink sink = [this, self, name, rate, join_sides](const v1::Record* host,
                                                                     const v1::Record* target) {
    if (options_.fleet) {
      // However the session came to be (started here, recovered, or opened through a peer of a
      // ring), it owes rows to ClickHouse from its first one on.
      if (auto st = OweFleetRows(self); !st.ok()) spdlog::error("{}", std::string(st.message()));
      const clickhouse::CommandContext context{
          name, rate, host ? self->files->WallMinusMono(host->agent()) : 0,
          target ? self->files->WallMinusMono(target->agent()) : 0};
      const uint64_t ticket = options_.fleet->Add(clickhouse::EncodeRow(context, host, target));
      uint64_t last = self->fleet_last_ticket.load();
      while (last < ticket && !self->fleet_last_ticket.compare_exchange_weak(last, ticket)) {
      }
    }
    if (self->fleet_reloading) return;
    if (join_sides) {
      metrics_->Add(host && target ? Counter::kJoinMatched
                    : host         ? Counter::kJoinHostOnly
                                   : Counter::kJoinTargetOnly);
      // Leftovers of a joined session are counted, not summarized (as in the file report).
      if (!(host && target)) return;
    }
    metrics_->ObserveCommand(host, target);
    watch_.Dispatch(name, rate, host, target);
  };
  for (size_t i = 0; i < shards_->size(); ++i) {
    session->joins.push_back(std::make_unique<LiveJoin>(join_sides, options_.join, sink));
  }
  return session;
}

absl::Status SessionRegistry::Load() {
  std::error_code ec;
  std::map<AgentKey, std::set<uint64_t>> held;
  for (const auto& dir : std::filesystem::directory_iterator(options_.data_dir / "sessions", ec)) {
    std::ifstream in(dir.path() / "session.pb", std::ios::binary);
    v1::SessionInfo info;
    if (!in || !info.ParseFromIstream(&in) || info.name() != dir.path().filename().string()) {
      spdlog::warn("{}: no readable session.pb; ignoring this directory", dir.path().string());
      continue;
    }
    auto session = NewSession(std::move(info));
    if (auto st = session->files->Recover(&held); !st.ok()) return st;
    if (options_.fleet && (session->running() || FleetPending(dir.path()))) {
      ReloadIntoFleet(session.get());
    }
    sessions_[session->info.name()] = std::move(session);
  }
  for (const auto& [agent, seqs] : held) {
    SequenceTracker& tracker = sequences_[agent];
    for (uint64_t seq : seqs) tracker.Accept(seq);
  }
  for (const auto& entry : std::filesystem::directory_iterator(options_.data_dir / "agents", ec)) {
    const std::string name = entry.path().stem().string();
    const size_t dash = name.rfind('-');
    AgentKey key;
    const bool lost = entry.path().extension() == ".lost";
    const bool dropped = entry.path().extension() == ".dropped";
    if ((!lost && !dropped) || dash == std::string::npos ||
        !absl::SimpleHexAtoi(name.substr(dash + 1), &key.epoch)) {
      continue;
    }
    key.hostname = name.substr(0, dash);
    std::ifstream in(entry.path());
    uint64_t first = 0, last = 0;
    while (in >> first >> last) {
      if (lost) {
        sequences_[key].DeclareLost(first, last);
      } else {
        for (uint64_t seq = first; seq <= last; ++seq) sequences_[key].Accept(seq);
      }
    }
  }
  if (!sessions_.empty()) {
    spdlog::info("recovered {} session(s) from {}", sessions_.size(), options_.data_dir.string());
  }
  return absl::OkStatus();
}

absl::Status SessionRegistry::Persist(const Session& session) const {
  const std::filesystem::path dir = options_.data_dir / "sessions" / session.info.name();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path tmp = dir / "session.pb.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !session.info.SerializeToOstream(&out)) {
      return absl::UnavailableError(absl::StrCat("cannot write ", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, dir / "session.pb", ec);  // atomic: never half a session.pb
  if (ec)
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp.string(), ": ", ec.message()));
  return absl::OkStatus();
}

// ---- agents -------------------------------------------------------------------------------------

absl::StatusOr<v1::Welcome> SessionRegistry::AttachAgent(AgentChannel* channel,
                                                         const v1::AgentHello& hello,
                                                         const std::string& peer) {
  if (hello.hostname().empty() || hello.hostname().find('/') != std::string::npos) {
    metrics_->Add(Counter::kBadAgentMessages);
    return absl::InvalidArgumentError("AgentHello needs a hostname (without '/')");
  }
  if (hello.role() != v1::ROLE_HOST && hello.role() != v1::ROLE_TARGET) {
    metrics_->Add(Counter::kBadAgentMessages);
    return absl::InvalidArgumentError("AgentHello needs a role: ROLE_HOST or ROLE_TARGET");
  }
  std::lock_guard lock(mu_);
  // A second stream from the same machine replaces the first (the old one is likely half-open).
  std::erase_if(agents_, [&](const auto& entry) {
    return entry.second.hello.hostname() == hello.hostname();
  });
  Agent& agent = agents_[channel];
  agent.hello = hello;
  agent.key = AgentKey{hello.hostname(), hello.stream_epoch()};
  agent.peer = peer;
  v1::Welcome welcome;
  welcome.set_acked_seq(sequences_[agent.key].acked());
  welcome.set_collector_version(NTPROF_VERSION);
  v1::CollectorMessage first;  // the contract: Welcome before anything else
  *first.mutable_welcome() = welcome;
  channel->Send(first);
  spdlog::info("agent {} ({}) connected from {}, epoch {:x}, acked {}", hello.hostname(),
               RoleName(hello.role()), peer, hello.stream_epoch(), welcome.acked_seq());
  // Running sessions that chose this agent and that it is not recording (it restarted): resume.
  const std::set<std::string> recording(hello.recording_sessions().begin(),
                                        hello.recording_sessions().end());
  for (const auto& [name, session] : sessions_) {
    if (!session->running() || recording.count(name) != 0) continue;
    for (const auto& a : session->info.agents()) {
      // A refusal is the agent's answer for this session: asking again would only repeat it.
      if (a.hostname() != hello.hostname() || !a.refusal().empty()) continue;
      v1::CollectorMessage start;
      v1::RecordingSettings* s = start.mutable_start()->mutable_settings();
      s->set_session(name);
      s->set_sample_rate(session->info.sample_rate());
      s->set_salt(session->info.salt());
      s->set_role(a.role());
      channel->Send(start);
    }
  }
  return welcome;
}

void SessionRegistry::DetachAgent(AgentChannel* channel) {
  std::lock_guard lock(mu_);
  if (auto it = agents_.find(channel); it != agents_.end()) {
    spdlog::info("agent {} disconnected", it->second.hello.hostname());
    agents_.erase(it);
  }
}

// Appends "first last" to data_dir/agents/<hostname>-<epoch>.<kind>, the files Load() reads back.
absl::Status SessionRegistry::AppendSequences(const AgentKey& agent, const char* kind,
                                              uint64_t first, uint64_t last) {
  const auto path = options_.data_dir / "agents" /
                    absl::StrFormat("%s-%016x.%s", agent.hostname, agent.epoch, kind);
  std::ofstream out(path, std::ios::app);
  out << first << " " << last << "\n";
  if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

void SessionRegistry::RememberLost(const AgentKey& agent, const v1::SequenceGap& gap) {
  (void)AppendSequences(agent, "lost", gap.first(), gap.last());
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
  auto it = agents_.find(channel);
  if (it == agents_.end()) {
    metrics_->Add(Counter::kBadAgentMessages);
    return absl::FailedPreconditionError("the first message on Connect must be AgentHello");
  }
  const Agent& agent = it->second;
  SequenceTracker& tracker = sequences_[agent.key];
  v1::Ack ack;
  if (message.has_gap()) {
    tracker.DeclareLost(message.gap().first(), message.gap().last());
    metrics_->Add(Counter::kSequenceLost, message.gap().last() - message.gap().first() + 1);
    RememberLost(agent.key, message.gap());
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
  if (auto st = Store(agent, message); !st.ok()) {
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
absl::Status SessionRegistry::Store(const Agent& agent, v1::AgentMessage& message) {
  const std::string& name = message.has_opened()   ? message.opened().header().session()
                            : message.has_batch()  ? message.batch().session()
                            : message.has_closed() ? message.closed().session()
                                                   : std::string();
  auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    metrics_->Add(Counter::kUnknownSession);
    spdlog::warn("agent {} sent a message for unknown session '{}': dropped",
                 agent.hello.hostname(), name);
    return RememberDropped(agent.key, message.seq());
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
    if (!session.files->HasHeader(agent.key)) return RememberDropped(agent.key, message.seq());
    return session.files->Close(agent.key, message.closed().trailer(), message.seq());
  }
  if (message.has_batch()) {
    if (!session.files->HasHeader(agent.key)) {
      metrics_->Add(Counter::kBadAgentMessages);
      spdlog::warn("agent {}: batch for session '{}' before SessionOpened: dropped",
                   agent.hello.hostname(), name);
      return RememberDropped(agent.key, message.seq());
    }
    v1::SessionBatch* batch = message.mutable_batch();
    batch->mutable_batch()->set_seq(message.seq());
    return StoreBatch(agent, &session, batch);
  }
  metrics_->Add(Counter::kBadAgentMessages);
  return RememberDropped(agent.key, message.seq());
}

// A message acked but not stored (it fits no session) is still held: a restarted collector must
// not ask for it again, so its number is written down like a session file's would be.
absl::Status SessionRegistry::RememberDropped(const AgentKey& agent, uint64_t seq) {
  return AppendSequences(agent, "dropped", seq, seq);
}

// Drops impossible records from *batch, writes it, then feeds the live join and watch.
absl::Status SessionRegistry::StoreBatch(const Agent& agent, Session* session,
                                         v1::SessionBatch* batch) {
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
  if (auto st = session->files->Append(agent.key, batch->batch()); !st.ok()) return st;
  metrics_->Add(Counter::kBatchesReceived);
  metrics_->Add(Counter::kRecordsReceived, static_cast<uint64_t>(kept));
  if (batch->batch().has_losses()) {
    v1::LossCounters& previous = session->losses[agent.key];
    metrics_->AddAgentLosses(LossDelta(previous, batch->batch().losses()));
    previous = batch->batch().losses();
  }
  for (const auto& counters : batch->batch().counters()) {
    watch_.DispatchCounters(session->info.name(), session->info.sample_rate(),
                            agent.hello.hostname(), counters);
  }
  Join(session, records, now);
  return absl::OkStatus();
}

void SessionRegistry::Join(Session* session, google::protobuf::RepeatedPtrField<v1::Record>* records,
                           int64_t now) {
  std::vector<LiveJoin*> joins;
  for (const auto& join : session->joins) joins.push_back(join.get());
  shards_->Submit(joins, std::make_shared<JoinShards::Records>(std::move(*records)), now);
}

void SessionRegistry::ForEachJoin(const Session& session,
                                  const std::function<void(LiveJoin&)>& fn) const {
  for (size_t shard = 0; shard < shards_->size(); ++shard) {
    shards_->WithShard(shard, [&] { fn(*session.joins[shard]); });
  }
}

JoinStats SessionRegistry::JoinStatsOf(const Session& session) const {
  JoinStats total;
  ForEachJoin(session, [&](LiveJoin& join) { total += join.stats(); });
  return total;
}

size_t SessionRegistry::ExpireJoins(const Session& session, int64_t now) const {
  size_t pending = 0;
  ForEachJoin(session, [&](LiveJoin& join) {
    join.Expire(now);
    pending += join.pending();
  });
  return pending;
}

// ---- sessions -----------------------------------------------------------------------------------

const SessionRegistry::Agent* SessionRegistry::ConnectedHost(const std::string& hostname) const {
  for (const auto& [channel, agent] : agents_) {
    if (agent.hello.hostname() == hostname) return &agent;
  }
  return nullptr;
}

absl::StatusOr<v1::SessionInfo> SessionRegistry::StartSession(const v1::StartSessionRequest& req) {
  auto refuse = [this](absl::Status status) {
    metrics_->Add(Counter::kRequestsRejected);
    return status;
  };
  if (!ValidSessionName(req.name())) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("session name '", req.name(), "' is not valid: use 1-64 of A-Z a-z 0-9 . _ - ",
                     "(not starting with . or -)")));
  }
  if (req.sample_rate() == 0) {
    return refuse(absl::InvalidArgumentError("sample rate must be at least 1 (-s N: one in N)"));
  }
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(req.name()); it != sessions_.end()) {
    return refuse(absl::AlreadyExistsError(
        absl::StrCat("session '", req.name(), "' already exists (",
                     StateName(it->second->info.state()), "); choose another name")));
  }
  v1::SessionInfo info;
  info.set_name(req.name());
  info.set_state(v1::SESSION_RUNNING);
  info.set_sample_rate(req.sample_rate());
  info.set_salt(req.salt() != 0 ? req.salt() : RandomSalt());
  info.set_start_wall_ns(static_cast<uint64_t>(Now()));
  info.set_duration_s(req.duration_s());

  // Selection: the named agents (each must be connected with that role), else all of the role.
  std::vector<std::string> missing;
  auto select = [&](const google::protobuf::RepeatedPtrField<std::string>& names, v1::Role role) {
    if (names.empty()) {
      for (const auto& [channel, agent] : agents_) {
        if (agent.hello.role() == role) AddAgent(&info, agent.hello.hostname(), role);
      }
      return;
    }
    for (const std::string& name : names) {
      const Agent* agent = ConnectedHost(name);
      if (!agent || agent->hello.role() != role) {
        missing.push_back(absl::StrCat(name, " (", RoleName(role), ")"));
      } else {
        AddAgent(&info, name, role);
      }
    }
  };
  select(req.hosts(), v1::ROLE_HOST);
  select(req.targets(), v1::ROLE_TARGET);
  std::vector<std::string> connected;
  for (const auto& [channel, agent] : agents_) {
    connected.push_back(
        absl::StrCat(agent.hello.hostname(), " (", RoleName(agent.hello.role()), ")"));
  }
  if (!missing.empty()) {
    return refuse(absl::NotFoundError(absl::StrCat(
        "not connected: ", absl::StrJoin(missing, ", "),
        "; connected agents: ", connected.empty() ? "none" : absl::StrJoin(connected, ", "))));
  }
  if (info.agents_size() == 0) {
    return refuse(absl::FailedPreconditionError(
        "no agents connected; start ntprofd with --collector pointing at this collector on the "
        "hosts and targets, then check `ntprofctl status`"));
  }
  auto session = NewSession(info);
  if (auto st = Persist(*session); !st.ok()) return st;
  if (options_.fleet) {
    if (auto st = OweFleetRows(session.get()); !st.ok()) return st;
  }
  for (const auto& a : info.agents()) {
    for (const auto& [channel, agent] : agents_) {
      if (agent.hello.hostname() != a.hostname()) continue;
      v1::CollectorMessage start;
      v1::RecordingSettings* s = start.mutable_start()->mutable_settings();
      s->set_session(info.name());
      s->set_sample_rate(info.sample_rate());
      s->set_salt(info.salt());
      s->set_role(a.role());
      s->mutable_subsystems()->CopyFrom(req.subsystems());
      s->mutable_devices()->CopyFrom(req.devices());
      s->set_duration_s(req.duration_s());
      channel->Send(start);
    }
  }
  spdlog::info("session {} started on {} agent(s), 1 in {}", info.name(), info.agents_size(),
               info.sample_rate());
  Session& stored = *session;
  sessions_[info.name()] = std::move(session);
  return InfoOf(stored);
}

void SessionRegistry::StopLocked(Session* session) {
  if (!session->running()) return;
  session->info.set_state(v1::SESSION_STOPPED);
  session->info.set_stop_wall_ns(static_cast<uint64_t>(Now()));
  ForEachJoin(*session, [](LiveJoin& join) { join.Flush(); });
  metrics_->Add(Counter::kWatchUpdatesDropped, watch_.EndSession(session->info.name(), Now()));
  if (auto st = Persist(*session); !st.ok()) spdlog::error("{}", st.ToString());
  v1::CollectorMessage stop;
  stop.mutable_stop()->set_session(session->info.name());
  for (const auto& a : session->info.agents()) {
    if (!a.refusal().empty()) continue;  // it records nothing of this session
    for (const auto& [channel, agent] : agents_) {
      if (agent.hello.hostname() == a.hostname()) channel->Send(stop);
    }
  }
  spdlog::info("session {} stopped", session->info.name());
}

// An agent that answers a start with an error before opening its recording refused the session:
// its entry keeps why (persisted, shown by status and the report). The session goes on with the
// agents that record; once every agent refused, nothing will ever arrive, so it stops rather than
// show "running" forever.
void SessionRegistry::RecordFailure(Session* session, const Agent& agent, const std::string& why) {
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
  StopLocked(it->second.get());
  return InfoOf(*it->second);
}

v1::SessionInfo SessionRegistry::InfoOf(const Session& session) const {
  v1::SessionInfo info = session.info;
  for (auto& a : *info.mutable_agents()) {
    const SessionFiles::Totals totals = session.files->TotalsOf(a.hostname());
    a.set_records(totals.records);
    a.set_batches(totals.batches);
    a.set_connected(ConnectedHost(a.hostname()) != nullptr);
    for (const auto& [key, losses] : session.losses) {
      if (key.hostname == a.hostname()) *a.mutable_losses() = losses;
    }
  }
  const JoinStats stats = JoinStatsOf(session);
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
  for (const auto& [channel, agent] : agents_) {
    v1::ConnectedAgent* a = reply.add_agents();
    a->set_hostname(agent.hello.hostname());
    a->set_role(agent.hello.role());
    a->set_transport(agent.hello.transport());
    a->set_agent_version(agent.hello.agent_version());
    a->set_peer(agent.peer);
    auto seq = sequences_.find(agent.key);
    if (seq != sequences_.end()) {
      a->set_acked_seq(seq->second.acked());
      a->set_duplicates(seq->second.duplicates());
      a->set_gaps(seq->second.lost());
    }
  }
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
    const size_t session_pending = ExpireJoins(*session, now);
    const uint64_t end_ns =
        session->info.start_wall_ns() + uint64_t{session->info.duration_s()} * 1'000'000'000;
    if (session->info.duration_s() != 0 && static_cast<uint64_t>(now) >= end_ns) {
      StopLocked(session.get());
      continue;
    }
    pending += session_pending;
    ++running;
  }
  if (options_.fleet) TickFleet(now);
  metrics_->Add(Counter::kWatchUpdatesDropped, watch_.Tick(now));
  metrics_->SetGauge(Gauge::kSessionsRunning, static_cast<double>(running));
  metrics_->SetGauge(Gauge::kAgentsConnected, static_cast<double>(agents_.size()));
  metrics_->SetGauge(Gauge::kJoinPending, static_cast<double>(pending));
  metrics_->SetGauge(Gauge::kWatchClients, static_cast<double>(watch_.clients()));
}

// ---- the fleet store -----------------------------------------------------------------------------

absl::Status SessionRegistry::OweFleetRows(Session* session) {
  if (session->fleet_pending) return absl::OkStatus();
  std::lock_guard lock(session->fleet_mu);
  if (session->fleet_pending) return absl::OkStatus();  // another join thread marked it first
  session->fleet_drops_at_start = options_.fleet->stats().rows_dropped;
  // The marker first: a row may be queued only once a crash would reload the session. A marker
  // that cannot be written is said once, not at every row.
  absl::Status marked = MarkFleetPending(session->files->dir());
  session->fleet_pending = true;
  return marked;
}

void SessionRegistry::ReloadIntoFleet(Session* session) {
  if (auto st = OweFleetRows(session); !st.ok()) spdlog::error("{}", std::string(st.message()));
  std::vector<std::string> paths;
  for (const StoredFile& f : session->files->Files()) paths.push_back(f.path);
  session->fleet_reloading = true;
  uint64_t records = 0;
  // Arrival now: halves of a running session wait one window for the other half, which the agent
  // may still replay.
  const int64_t now = Now();
  absl::Status st = ForEachStoredRecord(paths, [&](v1::Record r) {
    // One record at a time, joined on this thread: at most one row per wait, so even a small
    // queue is not overrun by the reload itself.
    options_.fleet->WaitForRoom();
    const size_t shard = shards_->ShardOf(r);
    shards_->WithShard(shard, [&] { session->joins[shard]->Add(std::move(r), now); });
    ++records;
  });
  if (!session->running()) ForEachJoin(*session, [](LiveJoin& join) { join.Flush(); });
  session->fleet_reloading = false;
  if (!st.ok()) {
    spdlog::error("session {}: reloading its files into ClickHouse stopped: {}",
                  session->info.name(), std::string(st.message()));
  }
  spdlog::info("session {}: {} stored records reloaded into ClickHouse", session->info.name(),
               records);
}

void SessionRegistry::TickFleet(int64_t now) {
  const clickhouse::WriterStats stats = options_.fleet->stats();
  const uint64_t delivered = options_.fleet->delivered();
  for (auto& [name, session] : sessions_) {
    if (session->running() || !session->fleet_pending) continue;
    // Agents' last batches may follow the stop: the join keeps pairing them for a window.
    const size_t pending = ExpireJoins(*session, now);
    const int64_t quiet_since =
        static_cast<int64_t>(session->info.stop_wall_ns()) + options_.join.window_ns;
    if (now < quiet_since || pending != 0 || delivered < session->fleet_last_ticket) continue;
    std::lock_guard lock(session->fleet_mu);
    if (stats.rows_dropped != session->fleet_drops_at_start) continue;  // a restart reloads it
    ClearFleetPending(session->files->dir());
    session->fleet_pending = false;
    spdlog::info("session {}: every row is in ClickHouse", name);
  }
  metrics_->Add(Counter::kFleetRowsInserted, stats.rows_inserted - fleet_seen_.rows_inserted);
  metrics_->Add(Counter::kFleetRowsDropped, stats.rows_dropped - fleet_seen_.rows_dropped);
  metrics_->Add(Counter::kFleetInsertFailures,
                stats.insert_failures - fleet_seen_.insert_failures);
  metrics_->SetGauge(Gauge::kFleetQueued, static_cast<double>(stats.queued));
  fleet_seen_ = stats;
}

}  // namespace ntprof::collector
