// The collector without network: SessionRegistry, sequence tracking, live join, watch queues.
#include <catch2/catch.hpp>

#include "live_join.h"
#include "ntprof_record.h"
#include "recording_messages.h"
#include "recording_set.h"
#include "recording_writer.h"
#include "report_json.h"
#include "report_text.h"
#include "sequence_tracker.h"
#include "watch_merge.h"
#include "session_registry.h"
#include "session_reports.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::collector;
using namespace ntprof::testing;

namespace {

class FakeChannel : public AgentChannel {
 public:
  void Send(const v1::CollectorMessage& m) override { sent.push_back(m); }
  std::vector<v1::CollectorMessage> sent;
};

CommandTiming Timing(int i) {
  return {
      300, 800, 470, 200, i % 2 == 0 ? 5'000u : 15'000u, 200, 300, i % 3 == 0 ? 50'000u : 70'000u,
      210, 300};
}

v1::AgentHello Hello(const std::string& hostname, v1::Role role, uint64_t epoch = 1) {
  v1::AgentHello h;
  h.set_hostname(hostname);
  h.set_role(role);
  h.set_stream_epoch(epoch);
  return h;
}

// A registry on a temporary data dir with a clock the test moves, one host and one target agent
// connected, and a recorded run (host.ntp, target.ntp) of session "test" to feed them.
struct Cluster {
  TempDir dir;
  int64_t now = 1'700'000'000'000'000'000;
  CollectorMetrics metrics;
  std::unique_ptr<SessionRegistry> registry;
  FakeChannel host, target;
  std::string host_file = dir.File("host.ntp");
  std::string target_file = dir.File("target.ntp");

  size_t join_threads = 1;

  explicit Cluster(int commands = 200, size_t threads = 1,
                   const std::function<CommandId(int)>& identity = nullptr)
      : join_threads(threads) {
    WriteRun(host_file, target_file, RunSpec{.commands = commands}, Timing, identity);
    Open();
  }
  void Open() {
    RegistryOptions options;
    options.data_dir = dir.path() / "data";
    options.wall_clock_ns = [this] { return now; };
    options.join.window_ns = 1'000'000'000;
    options.join_threads = join_threads;
    auto opened = SessionRegistry::Open(options, &metrics);
    REQUIRE(opened.ok());
    registry = std::move(*opened);
    REQUIRE(registry->AttachAgent(&host, Hello("host1", v1::ROLE_HOST), "test").ok());
    REQUIRE(registry->AttachAgent(&target, Hello("target1", v1::ROLE_TARGET), "test").ok());
  }
  // The collector process goes away and comes back on the same data dir (no agent attached).
  void Restart() {
    registry.reset();
    RegistryOptions options;
    options.data_dir = dir.path() / "data";
    auto reopened = SessionRegistry::Open(options, &metrics);
    REQUIRE(reopened.ok());
    registry = std::move(*reopened);
  }
  void Start(const std::string& name = "test") {
    v1::StartSessionRequest request;
    request.set_name(name);
    request.mutable_settings()->set_sample_rate(10);
    REQUIRE(registry->StartSession(request).ok());
  }
  // Sends a recording's messages with seq first, first+1, ...; returns the last ack.
  uint64_t Feed(FakeChannel* channel, const std::string& file, uint64_t first = 1) {
    uint64_t seq = first, ack = 0;
    for (auto m : RecordingMessages(file)) {
      m.set_seq(seq++);
      auto result = registry->Ingest(channel, m);
      REQUIRE(result.ok());
      ack = result->seq();
    }
    return ack;
  }
  std::string SessionText() {
    auto stored = registry->Stored("test");
    REQUIRE(stored.ok());
    auto report = SessionReport(*stored);
    REQUIRE(report.ok());
    return RenderText(*report, TextOptions{true});
  }
  std::string FileText() {
    auto set = RecordingSet::Open({host_file, target_file});
    REQUIRE(set.ok());
    auto report = set->BuildReport();
    REQUIRE(report.ok());
    return RenderText(*report, TextOptions{true});
  }
  const v1::SessionAgent& AgentOf(const std::string& hostname) {
    static v1::ListSessionsReply list;
    list = registry->List();
    for (const auto& a : list.sessions(0).agents()) {
      if (a.hostname() == hostname) return a;
    }
    FAIL("no agent " << hostname);
    throw;
  }
};

// What ntprofd answers a start it cannot take (daemon/service/recordings.cpp).
v1::AgentMessage Refusal(const std::string& session, uint64_t seq) {
  v1::AgentMessage m;
  m.set_seq(seq);
  m.mutable_closed()->set_session(session);
  m.mutable_closed()->set_error(
      "already recording session test; stop it first (one recording at a time per agent)");
  return m;
}

v1::SessionInfo SessionNamed(const SessionRegistry& registry, const std::string& name) {
  const v1::ListSessionsReply list = registry.List();
  for (const auto& s : list.sessions()) {
    if (s.name() == name) return s;
  }
  FAIL("no session " << name);
  throw;
}

size_t StopsSent(const FakeChannel& channel, const std::string& session) {
  return std::count_if(channel.sent.begin(), channel.sent.end(), [&](const auto& m) {
    return m.has_stop() && m.stop().session() == session;
  });
}

v1::AgentMessage Batch(const std::string& session, std::vector<v1::Record> records, uint64_t seq) {
  v1::AgentMessage m;
  m.set_seq(seq);
  m.mutable_batch()->set_session(session);
  for (auto& r : records) *m.mutable_batch()->mutable_batch()->add_records() = r;
  return m;
}

}  // namespace

TEST_CASE("sequence_tracker_discards_duplicates_and_reports_holes") {
  SequenceTracker t;
  CHECK(t.Accept(1) == SequenceTracker::Verdict::kNew);
  CHECK(t.Accept(3) == SequenceTracker::Verdict::kNew);
  CHECK(t.acked() == 1);  // 2 is missing: the ack stays below the hole
  CHECK(t.holes() == 1);
  CHECK(t.Accept(3) == SequenceTracker::Verdict::kDuplicate);
  CHECK(t.Accept(1) == SequenceTracker::Verdict::kDuplicate);
  CHECK(t.duplicates() == 2);
  t.DeclareLost(2, 2);  // the agent's spool overflowed
  CHECK(t.acked() == 3);
  CHECK(t.lost() == 1);
  CHECK(t.holes() == 0);
}

TEST_CASE("sequence_tracker_memory_is_bounded_when_an_agent_skips_numbers") {
  SequenceTracker t;
  // Never sends 1: without a bound every later number would be held forever.
  for (uint64_t s = 2; s < SequenceTracker::kMaxHeldAbove + 10; ++s) t.Accept(s);
  CHECK(t.acked() == SequenceTracker::kMaxHeldAbove + 9);
  CHECK(t.lost() == 1);
}

TEST_CASE("registry_starts_sessions_on_the_selected_agents_with_one_rate_and_salt") {
  Cluster c(10);
  c.Start();
  REQUIRE(c.host.sent.size() == 2);  // Welcome, then StartRecording
  REQUIRE(c.target.sent.size() == 2);
  CHECK(c.host.sent[0].has_welcome());
  const auto& h = c.host.sent[1].start().settings();
  const auto& t = c.target.sent[1].start().settings();
  CHECK(h.session() == "test");
  CHECK(h.sample_rate() == 10);
  CHECK(t.sample_rate() == 10);
  CHECK(h.salt() == t.salt());
  CHECK(h.salt() != 0);
  CHECK(h.role() == v1::ROLE_HOST);
  CHECK(t.role() == v1::ROLE_TARGET);
}

// Issue 41 item 2: a resumed session lost its filters and duration (the agent then recorded
// everything, with no end). An agent that comes back, and an agent that meets a restarted
// collector, get the session's settings exactly as stored, with the time the session has left.
TEST_CASE("an_agent_that_comes_back_resumes_its_session_with_every_setting") {
  Cluster c(10);
  v1::StartSessionRequest request;
  request.set_name("filtered");
  v1::RecordingSettings* asked = request.mutable_settings();
  asked->set_sample_rate(10);
  asked->add_subsystems("nqn.2014-08.org.example:a");
  asked->add_subsystems("nqn.2014-08.org.example:b");
  asked->add_devices("nvme1n1");
  asked->set_duration_s(60);
  REQUIRE(c.registry->StartSession(request).ok());
  REQUIRE(c.host.sent.size() == 2);
  const v1::RecordingSettings first = c.host.sent[1].start().settings();
  CHECK(first.subsystems_size() == 2);
  CHECK(first.devices(0) == "nvme1n1");
  CHECK(first.duration_s() == 60);

  auto expect_resumed = [&](const v1::RecordingSettings& resumed, uint32_t seconds_left) {
    v1::RecordingSettings expected = first;
    expected.set_duration_s(seconds_left);
    CHECK(resumed.DebugString() == expected.DebugString());
  };
  // The host agent restarts 20 s in: a new stream, recording nothing.
  c.now += 20'000'000'000;
  c.registry->DetachAgent(&c.host);
  FakeChannel back;
  REQUIRE(c.registry->AttachAgent(&back, Hello("host1", v1::ROLE_HOST, 2), "test").ok());
  REQUIRE(back.sent.size() == 2);  // Welcome, then the session again
  expect_resumed(back.sent[1].start().settings(), 40);

  // The collector restarts (kill -9: nothing but the disk survives) 30 s in.
  c.now += 10'000'000'000;
  c.registry.reset();
  RegistryOptions options;
  options.data_dir = c.dir.path() / "data";
  options.wall_clock_ns = [&c] { return c.now; };
  auto reopened = SessionRegistry::Open(options, &c.metrics);
  REQUIRE(reopened.ok());
  c.registry = std::move(*reopened);
  FakeChannel target_back;
  REQUIRE(c.registry->AttachAgent(&target_back, Hello("target1", v1::ROLE_TARGET), "t").ok());
  REQUIRE(target_back.sent.size() == 2);
  v1::RecordingSettings for_host = target_back.sent[1].start().settings();
  CHECK(for_host.role() == v1::ROLE_TARGET);
  for_host.set_role(v1::ROLE_HOST);
  expect_resumed(for_host, 30);

  // An agent still recording the session (its hello says so) is not asked again.
  FakeChannel still;
  v1::AgentHello hello = Hello("host1", v1::ROLE_HOST, 2);
  hello.add_recording_sessions("filtered");
  REQUIRE(c.registry->AttachAgent(&still, hello, "test").ok());
  CHECK(still.sent.size() == 1);
}

TEST_CASE("registry_joins_across_agents_and_reports_like_the_files") {
  Cluster c(200);
  c.Start();
  c.Feed(&c.host, c.host_file);
  c.Feed(&c.target, c.target_file);
  c.registry->Tick();
  const v1::ListSessionsReply list = c.registry->List();
  CHECK(list.sessions(0).matched() == 200);
  CHECK(list.sessions(0).host_only() == 0);
  CHECK(c.AgentOf("host1").records() == 200);
  CHECK(c.AgentOf("target1").records() == 200);
  CHECK(c.metrics.Get(Counter::kJoinMatched) == 200);
  // Still running, so the session's report says so; otherwise it is the file report.
  std::string session_text = c.SessionText();
  CHECK(session_text.find("session test is still running") != std::string::npos);
  REQUIRE(c.registry->StopSession("test").ok());
  CHECK(c.SessionText() == c.FileText());
}

TEST_CASE("registry_joins_on_several_threads_exactly_as_on_one") {
  // 2,000 commands over 16 subsystems (and cids reused within each), so every shard gets some.
  auto identity = [](int i) {
    return CommandId{.nqn = "nqn.2024-01.io.ntprof:subsystem-" + std::to_string(i % 16),
                     .cid = static_cast<uint32_t>(i % 32),
                     .slba = static_cast<uint64_t>(i) * 8};
  };
  std::string one_thread_text;
  for (size_t threads : {size_t{1}, size_t{3}}) {
    CAPTURE(threads);
    Cluster c(2000, threads, identity);
    c.Start();
    c.Feed(&c.host, c.host_file);
    c.Feed(&c.target, c.target_file);
    const v1::ListSessionsReply list = c.registry->List();
    CHECK(list.sessions(0).matched() == 2000);
    CHECK(list.sessions(0).host_only() == 0);
    CHECK(list.sessions(0).target_only() == 0);
    CHECK(c.metrics.Get(Counter::kJoinMatched) == 2000);
    REQUIRE(c.registry->StopSession("test").ok());
    const std::string text = c.SessionText();
    CHECK(text == c.FileText());
    if (threads == 1) one_thread_text = text;
    CHECK(text == one_thread_text);
  }
}

TEST_CASE("registry_discards_replayed_messages_by_sequence") {
  Cluster c(100);
  c.Start();
  const uint64_t acked = c.Feed(&c.host, c.host_file);
  c.Feed(&c.target, c.target_file);
  CHECK(c.Feed(&c.host, c.host_file) == acked);  // the whole stream again, same numbers
  CHECK(c.metrics.Get(Counter::kDuplicateMessages) == acked);
  CHECK(c.AgentOf("host1").records() == 100);
  REQUIRE(c.registry->StopSession("test").ok());
  CHECK(c.SessionText() == c.FileText());
}

TEST_CASE("registry_reports_gaps_and_moves_the_ack_past_declared_losses") {
  Cluster c(50);
  c.Start();
  auto messages = RecordingMessages(c.host_file);
  messages[0].set_seq(1);
  REQUIRE(c.registry->Ingest(&c.host, messages[0]).ok());
  messages[1].set_seq(3);  // 2 never arrives
  auto ack = c.registry->Ingest(&c.host, messages[1]);
  REQUIRE(ack.ok());
  CHECK(ack->seq() == 1);
  v1::AgentMessage gap;
  gap.mutable_gap()->set_first(2);
  gap.mutable_gap()->set_last(2);
  gap.mutable_gap()->set_reason("spool full");
  ack = c.registry->Ingest(&c.host, gap);
  REQUIRE(ack.ok());
  CHECK(ack->seq() == 3);
  const auto list = c.registry->List();
  CHECK(list.sessions(0).notes(0) == "host1 lost batches 2..2 (spool full)");
  for (const auto& a : list.agents()) {
    if (a.hostname() == "host1") CHECK(a.gaps() == 1);
  }
}

TEST_CASE("registry_restart_keeps_sessions_and_what_it_acked") {
  Cluster c(100);
  c.Start();
  const uint64_t host_acked = c.Feed(&c.host, c.host_file);
  c.Feed(&c.target, c.target_file);
  REQUIRE(c.registry->StopSession("test").ok());
  const std::string before = c.SessionText();

  c.Restart();  // the collector goes away; its data dir stays
  auto welcome = c.registry->AttachAgent(&c.host, Hello("host1", v1::ROLE_HOST), "test");
  REQUIRE(welcome.ok());
  CHECK(welcome->acked_seq() == host_acked);
  // The agent replays everything it still has: all of it is already held.
  c.Feed(&c.host, c.host_file);
  CHECK(c.AgentOf("host1").records() == 100);
  CHECK(c.SessionText() == before);
  // A new epoch (the agent lost its spool) starts from 0.
  welcome = c.registry->AttachAgent(&c.host, Hello("host1", v1::ROLE_HOST, 2), "test");
  CHECK(welcome->acked_seq() == 0);
}

TEST_CASE("session_report_says_the_collector_stopped_before_an_agents_file_was_closed") {
  Cluster c(20);
  c.Start();
  c.Feed(&c.host, c.host_file);
  std::vector<v1::AgentMessage> target = RecordingMessages(c.target_file);
  target.pop_back();  // its SessionClosed had not come when the collector was killed
  uint64_t seq = 1;
  for (auto& m : target) {
    m.set_seq(seq++);
    REQUIRE(c.registry->Ingest(&c.target, m).ok());
  }
  c.Restart();  // killed: no file is closed; target1 sends nothing more for the session
  REQUIRE(c.registry->StopSession("test").ok());
  auto stored = c.registry->Stored("test");
  REQUIRE(stored.ok());
  auto report = SessionReport(*stored);
  REQUIRE(report.ok());
  CHECK(report->records.matched == 20);
  CHECK_THAT(report->notes,
             Catch::VectorContains(std::string(
                 "target1-target.ntp: the collector stopped (killed, crashed or restarted) before "
                 "this file was closed, and target1 sent nothing more for the session since; read "
                 "up to its last batch")));
  for (const std::string& note : report->notes) {
    CHECK_THAT(note, !Catch::Contains("the agent stopped without closing it") &&
                         !Catch::Contains("host1") && !Catch::Contains(c.dir.path().string()));
  }
}

TEST_CASE("session_report_leaves_out_an_agent_whose_salt_differs_and_names_it") {
  Cluster c(20);
  FakeChannel other;
  REQUIRE(c.registry->AttachAgent(&other, Hello("target2", v1::ROLE_TARGET), "test").ok());
  const std::string other_file = c.dir.File("salt7-target.ntp");
  WriteRun("", other_file, RunSpec{.commands = 20, .salt = 7}, Timing);
  c.Start();
  c.Feed(&c.host, c.host_file);
  c.Feed(&c.target, c.target_file);
  c.Feed(&other, other_file);
  REQUIRE(c.registry->StopSession("test").ok());
  auto stored = c.registry->Stored("test");
  REQUIRE(stored.ok());
  auto report = SessionReport(*stored);
  REQUIRE(report.ok());  // the agents that fit are reported
  auto files = RecordingSet::Open({c.host_file, c.target_file});
  REQUIRE(files.ok());
  auto file_report = files->BuildReport();
  REQUIRE(file_report.ok());
  CHECK(ToJson(*report)["groups"] == ToJson(*file_report)["groups"]);
  CHECK(report->records.matched == 20);
  CHECK(report->records.target == 20);
  CHECK_THAT(report->notes, Catch::VectorContains(std::string(
                                "target2-target.ntp: salt 7, not 42 (that of the 2 agent(s) it "
                                "differs from): left out of this report, its commands cannot be "
                                "joined with theirs")));
  for (const std::string& note : report->notes) {
    CHECK_THAT(note, !Catch::Contains("--salt") && !Catch::Contains(c.dir.path().string()));
  }
}

TEST_CASE("messages_acked_for_no_session_stay_held_after_a_collector_restart") {
  Cluster c(20);  // no session started: everything the host sends fits no session
  const uint64_t acked = c.Feed(&c.host, c.host_file);
  REQUIRE(acked > 0);
  c.Restart();
  auto welcome = c.registry->AttachAgent(&c.host, Hello("host1", v1::ROLE_HOST), "test");
  REQUIRE(welcome.ok());
  CHECK(welcome->acked_seq() == acked);  // not asked again, not declared lost
}

TEST_CASE("registry_refuses_impossible_records_and_unknown_sessions_and_goes_on") {
  Cluster c(20);
  c.Start();
  auto messages = RecordingMessages(c.host_file);
  messages[0].set_seq(1);
  REQUIRE(c.registry->Ingest(&c.host, messages[0]).ok());
  v1::Record good = messages[1].batch().batch().records(0);
  v1::Record backwards = good;
  backwards.set_stamps(5, backwards.stamps(0) - 1);  // H5 before H0
  v1::Record too_many = good;
  for (int i = 0; i < 20; ++i) too_many.add_stamps(1);
  auto ack = c.registry->Ingest(&c.host, Batch("test", {good, backwards, too_many}, 2));
  REQUIRE(ack.ok());
  CHECK(ack->seq() == 2);
  CHECK(c.metrics.Get(Counter::kRecordsRejected) == 2);
  CHECK(c.AgentOf("host1").records() == 1);
  ack = c.registry->Ingest(&c.host, Batch("nope", {good}, 3));
  REQUIRE(ack.ok());
  CHECK(ack->seq() == 3);  // acked so that it never blocks the agent
  CHECK(c.metrics.Get(Counter::kUnknownSession) == 1);
  // Hello missing, seq missing: errors for the stream, counted.
  FakeChannel stranger;
  CHECK(!c.registry->Ingest(&stranger, Batch("test", {good}, 1)).ok());
  CHECK(!c.registry->Ingest(&c.host, Batch("test", {good}, 0)).ok());
  CHECK(c.metrics.Get(Counter::kBadAgentMessages) == 2);
}

// Raw records in a layout this collector does not know: the batch's records are dropped and
// counted, the rest of the batch is kept, and the session's files still read (the refused raw
// part is not written into them).
TEST_CASE("registry_drops_raw_records_it_cannot_read_and_its_files_still_read") {
  Cluster c(20);
  c.Start();
  auto messages = RecordingMessages(c.host_file);
  messages[0].set_seq(1);
  REQUIRE(c.registry->Ingest(&c.host, messages[0]).ok());
  const v1::Record good = messages[1].batch().batch().records(0);
  v1::AgentMessage future = Batch("test", {good}, 2);
  v1::RecordBatch* b = future.mutable_batch()->mutable_batch();
  b->mutable_raw_records()->assign(NTPROF_RECORD_SIZE, '\0');
  b->add_identities()->set_subsys_nqn("nqn.x");
  b->set_raw_layout(NTPROF_RECORD_LAYOUT + 1);
  auto ack = c.registry->Ingest(&c.host, future);
  REQUIRE(ack.ok());
  CHECK(ack->seq() == 2);
  CHECK(c.metrics.Get(Counter::kBadAgentMessages) == 1);
  CHECK(c.AgentOf("host1").records() == 1);  // the message's own record is kept
  REQUIRE(c.registry->StopSession("test").ok());
  auto stored = c.registry->Stored("test");
  REQUIRE(stored.ok());
  CHECK(SessionReport(*stored).ok());
}

TEST_CASE("registry_refuses_a_clashing_session_name_without_touching_the_first") {
  Cluster c(20);
  c.Start();
  c.Feed(&c.host, c.host_file);
  v1::StartSessionRequest again;
  again.set_name("test");
  again.mutable_settings()->set_sample_rate(1);
  auto clash = c.registry->StartSession(again);
  REQUIRE(!clash.ok());
  CHECK(clash.status().code() == absl::StatusCode::kAlreadyExists);
  again.set_name("../escape");
  CHECK(c.registry->StartSession(again).status().code() == absl::StatusCode::kInvalidArgument);
  again.set_name("other");
  again.add_hosts("nosuchhost");
  auto missing = c.registry->StartSession(again);
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(missing.status().message()).find("host1 (host)") != std::string::npos);
  CHECK(c.metrics.Get(Counter::kRequestsRejected) == 3);
  const auto list = c.registry->List();
  REQUIRE(list.sessions_size() == 1);
  CHECK(list.sessions(0).settings().sample_rate() == 10);
  CHECK(c.AgentOf("host1").records() == 20);
}

TEST_CASE("registry_stops_a_session_every_agent_refused_and_keeps_why") {
  Cluster c(20);
  c.Start("test");
  const uint64_t host_seq = c.Feed(&c.host, c.host_file);
  c.Start("second");
  REQUIRE(c.registry->Ingest(&c.host, Refusal("second", host_seq + 1)).ok());
  CHECK(SessionNamed(*c.registry, "second").state() == v1::SESSION_RUNNING);  // target may take it
  REQUIRE(c.registry->Ingest(&c.target, Refusal("second", 1)).ok());
  const v1::SessionInfo second = SessionNamed(*c.registry, "second");
  CHECK(second.state() == v1::SESSION_STOPPED);  // nothing will ever arrive: not "running" forever
  REQUIRE(second.agents_size() == 2);
  for (const auto& a : second.agents()) {
    CHECK_THAT(a.refusal(), Catch::Contains("already recording session test"));
    CHECK(!a.opened());
  }
  const std::vector<std::string> notes(second.notes().begin(), second.notes().end());
  CHECK_THAT(notes, Catch::VectorContains(std::string(
                        "every agent refused the session: nothing was recorded")));
  CHECK(StopsSent(c.host, "second") == 0);  // they record nothing of it
  auto stored = c.registry->Stored("second");  // what the session's report notes
  REQUIRE(stored.ok());
  CHECK_THAT(stored->notes, Catch::VectorContains(std::string(
                                "host1 refused to record: already recording session test; stop it "
                                "first (one recording at a time per agent)")));
  CHECK(SessionNamed(*c.registry, "test").state() == v1::SESSION_RUNNING);
  CHECK(SessionNamed(*c.registry, "test").agents(0).opened());
}

TEST_CASE("registry_marks_an_agent_closed_once_its_last_records_are_in") {
  // `ntprofctl run` reports a session only after every agent's SessionClosed arrived.
  Cluster c(20);
  c.Start("test");
  auto messages = RecordingMessages(c.host_file);
  REQUIRE(messages.back().has_closed());
  uint64_t seq = 1;
  for (size_t i = 0; i + 1 < messages.size(); ++i) {
    messages[i].set_seq(seq++);
    REQUIRE(c.registry->Ingest(&c.host, messages[i]).ok());
  }
  CHECK(c.AgentOf("host1").opened());
  CHECK(!c.AgentOf("host1").closed());
  messages.back().set_seq(seq);
  REQUIRE(c.registry->Ingest(&c.host, messages.back()).ok());
  CHECK(c.AgentOf("host1").closed());
  CHECK(!c.AgentOf("target1").closed());
  c.Restart();  // part of the stored session
  CHECK(c.AgentOf("host1").closed());
}

TEST_CASE("registry_keeps_recording_on_the_agents_that_took_the_session") {
  Cluster c(20);
  c.Start("test");
  c.Feed(&c.host, c.host_file);
  REQUIRE(c.registry->Ingest(&c.target, Refusal("test", 1)).ok());
  CHECK(SessionNamed(*c.registry, "test").state() == v1::SESSION_RUNNING);
  CHECK(c.AgentOf("host1").opened());
  CHECK(c.AgentOf("host1").refusal().empty());
  CHECK_THAT(c.AgentOf("target1").refusal(), Catch::Contains("already recording"));

  c.Restart();  // the answers are part of the stored session
  CHECK(c.AgentOf("host1").opened());
  CHECK_THAT(c.AgentOf("target1").refusal(), Catch::Contains("already recording"));
  // A reconnecting agent is asked again only for what it did not refuse.
  FakeChannel target;
  REQUIRE(c.registry->AttachAgent(&target, Hello("target1", v1::ROLE_TARGET), "test").ok());
  CHECK(target.sent.size() == 1);  // the Welcome only
  REQUIRE(c.registry->StopSession("test").ok());
  CHECK(StopsSent(target, "test") == 0);
}

TEST_CASE("registry_lets_watch_follow_running_sessions_only") {
  Cluster c(20);
  c.Start("test");
  CHECK(c.registry->Watchable("").ok());
  CHECK(c.registry->Watchable("test").ok());
  const absl::Status unknown = c.registry->Watchable("no-such-session");
  CHECK(unknown.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(unknown.message()), Catch::Contains("no session named 'no-such-session'"));
  REQUIRE(c.registry->StopSession("test").ok());
  const absl::Status stopped = c.registry->Watchable("test");
  CHECK(stopped.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(stopped.message()), Catch::Contains("ntprofctl report test"));
}

TEST_CASE("live_join_memory_is_bounded_when_a_side_never_arrives") {
  uint64_t host_only = 0;
  LiveJoin join(true, JoinOptions{.window_ns = 1'000'000'000, .max_pending = 100},
                [&](const v1::Record* h, const v1::Record* t) { host_only += h && !t; });
  for (int i = 0; i < 1000; ++i) {
    join.Add(MakeRecord(v1::ROLE_HOST, CommandId{.cid = static_cast<uint32_t>(i)},
                        HostStamps(1000, 1, 1, 1, 1, 1), "nvme0n1"),
             i);
    CHECK(join.pending() <= 100);
  }
  join.Expire(2'000'000'000);
  CHECK(join.pending() == 0);
  CHECK(host_only == 1000);
}

TEST_CASE("watch_queue_drops_the_oldest_updates_of_a_slow_client_only") {
  WatchHub hub(2);
  int notified = 0;
  auto slow = hub.Subscribe(
      WatchFilter{}, [&] { ++notified; }, 0);
  auto fast = hub.Subscribe(
      WatchFilter{}, [] {}, 0);
  const v1::Record host =
      MakeRecord(v1::ROLE_HOST, CommandId{}, HostStamps(1000, 1, 2, 3, 4, 5), "nvme0n1");
  uint64_t fast_dropped = 0;
  for (int second = 1; second <= 5; ++second) {
    hub.Dispatch("s", 1, &host, nullptr);
    hub.Tick(second * 1'000'000'000ll);
    auto update = fast->Next();  // the fast client reads every interval
    REQUIRE(update);
    CHECK(update->groups_size() == 1);
    fast_dropped = update->dropped_updates();
  }
  CHECK(notified == 5);
  CHECK(fast_dropped == 0);
  auto oldest_kept = slow->Next();
  REQUIRE(oldest_kept);
  CHECK(oldest_kept->dropped_updates() == 3);
  CHECK(oldest_kept->interval_end_wall_ns() == 4'000'000'000u);
}

TEST_CASE("watch_filters_by_host_target_and_group") {
  WatchHub hub;
  v1::WatchRequest request;
  request.add_hosts("web1");
  request.add_groups("write");
  auto client = hub.Subscribe(
      WatchFilter::From(request), [] {}, 0);
  v1::Record read =
      MakeRecord(v1::ROLE_HOST, CommandId{}, HostStamps(1000, 1, 2, 3, 4, 5), "nvme0n1");
  v1::Record write = MakeRecord(v1::ROLE_HOST, CommandId{.opcode = 0x01},
                                HostStamps(1000, 1, 2, 3, 4, 5), "nvme0n1");
  read.set_agent("web1");
  write.set_agent("web1");
  v1::Record other_host = write;
  other_host.set_agent("web2");
  for (const v1::Record* r : {&read, &write, &other_host}) hub.Dispatch("s", 1, r, nullptr);
  hub.Tick(1'000'000'000);
  auto update = client->Next();
  REQUIRE(update);
  REQUIRE(update->groups_size() == 1);
  CHECK(update->groups(0).name() == "write 4KiB nvme0n1");
  CHECK(update->groups(0).sampled() == 1);
  CHECK(update->groups(0).line().rfind("s write 4KiB nvme0n1: 1 sampled", 0) == 0);
}

TEST_CASE("watch_of_a_session_ends_with_it_after_its_last_partial_interval") {
  WatchHub hub;
  v1::WatchRequest of_s;
  of_s.set_session("s");
  int notified = 0;
  auto watcher = hub.Subscribe(WatchFilter::From(of_s), [&] { ++notified; }, 0);
  auto of_all = hub.Subscribe(WatchFilter{}, [] {}, 0);
  const v1::Record host =
      MakeRecord(v1::ROLE_HOST, CommandId{}, HostStamps(1000, 1, 2, 3, 4, 5), "nvme0n1");
  auto sampled = [](const v1::WatchUpdate& u) { return u.groups_size() ? u.groups(0).sampled() : 0; };
  for (int i = 0; i < 3; ++i) hub.Dispatch("s", 1, &host, nullptr);
  hub.Tick(1'000'000'000);
  for (int i = 0; i < 2; ++i) hub.Dispatch("s", 1, &host, nullptr);
  CHECK(!watcher->ended());
  hub.EndSession("other", 1'200'000'000);  // another session's end changes nothing here
  CHECK(!watcher->ended());
  hub.EndSession("s", 1'400'000'000);  // stopped 0.4 s into the second interval
  CHECK(watcher->ended());
  CHECK(notified == 2);
  auto first = watcher->Next();
  REQUIRE(first);
  CHECK(sampled(*first) == 3);
  auto last = watcher->Next();  // the partial interval up to the stop
  REQUIRE(last);
  CHECK(sampled(*last) == 2);
  CHECK(last->interval_s() == Approx(0.4));
  // Nothing follows, whatever comes in or ticks.
  hub.Dispatch("s", 1, &host, nullptr);
  hub.Tick(3'000'000'000);
  CHECK(!watcher->Next());
  CHECK(notified == 2);
  CHECK(!of_all->ended());  // a watch of every session goes on
  CHECK(of_all->Next().has_value());
  CHECK(of_all->Next().has_value());
}

TEST_CASE("registry_stop_ends_the_watch_of_the_session_with_every_joined_command") {
  Cluster c(20);
  c.Start();
  v1::WatchRequest request;
  request.set_session("test");
  auto watcher = c.registry->watch().Subscribe(WatchFilter::From(request), [] {}, c.now);
  c.Feed(&c.host, c.host_file);
  c.Feed(&c.target, c.target_file);
  CHECK(!watcher->ended());
  REQUIRE(c.registry->StopSession("test").ok());
  CHECK(watcher->ended());
  auto last = watcher->Next();  // the clock did not move: the stop's interval is the only one
  REQUIRE(last);
  REQUIRE(last->groups_size() == 1);
  CHECK(last->groups(0).scope() == "joined");
  CHECK(last->groups(0).sampled() == 20);
  CHECK(!watcher->Next());
}

namespace {

// Host-only reads of subsystem `nqn`: command i waits 100 us + i * step_ns on the wire.
void DispatchReads(WatchHub* hub, const std::string& nqn, int count, uint64_t step_ns,
                   const std::string& device = "nvme0n1") {
  for (int i = 0; i < count; ++i) {
    CommandId id{.nqn = nqn, .cid = static_cast<uint32_t>(i)};
    v1::Record r = MakeRecord(v1::ROLE_HOST, id,
                              HostStamps(1000, 1'000, 2'000, 100'000 + i * step_ns, 1'500, 500),
                              device);
    r.set_agent("web1");
    hub->Dispatch("s", 1, &r, nullptr);
  }
}

v1::WatchUpdate OneInterval(WatchHub* hub, const std::shared_ptr<WatchSubscription>& client) {
  hub->Tick(1'000'000'000);
  auto update = client->Next();
  REQUIRE(update);
  return *update;
}

}  // namespace

TEST_CASE("watch_merge_combines_a_group_two_collectors_hold_as_one_collector_would_see_it") {
  // Collector A holds subsystem a (30 fast reads), B holds b (10 slow ones); one collector holding
  // both is the ground truth.
  WatchHub a, b, both;
  auto ca = a.Subscribe(WatchFilter{}, [] {}, 0);
  auto cb = b.Subscribe(WatchFilter{}, [] {}, 0);
  auto call = both.Subscribe(WatchFilter{}, [] {}, 0);
  DispatchReads(&a, "nqn.a", 30, 1'000);
  DispatchReads(&b, "nqn.b", 10, 50'000);
  DispatchReads(&both, "nqn.a", 30, 1'000);
  DispatchReads(&both, "nqn.b", 10, 50'000);
  const v1::WatchUpdate part_a = OneInterval(&a, ca), part_b = OneInterval(&b, cb);
  const v1::WatchUpdate truth = OneInterval(&both, call);
  const v1::WatchUpdate merged = MergeWatchUpdates(part_a, {part_b});
  REQUIRE(merged.groups_size() == 1);
  REQUIRE(truth.groups_size() == 1);
  const v1::WatchGroup& m = merged.groups(0);
  const v1::WatchGroup& t = truth.groups(0);
  CHECK(m.name() == t.name());
  CHECK(m.sampled() == 40);
  CHECK(m.rate_per_s() == Approx(t.rate_per_s()));
  CHECK(m.mean_ns() == Approx(t.mean_ns()));
  // The parts' largest p99: at least the true one (here B's slow reads make both the same).
  CHECK(m.p99_ns() == std::max(part_a.groups(0).p99_ns(), part_b.groups(0).p99_ns()));
  CHECK(m.p99_ns() >= t.p99_ns() * 0.95);
  REQUIRE(m.stages_size() == t.stages_size());
  for (int i = 0; i < t.stages_size(); ++i) {
    INFO(t.stages(i).stage());
    CHECK(m.stages(i).stage() == t.stages(i).stage());
    CHECK(m.stages(i).mean_ns() == Approx(t.stages(i).mean_ns()));
    CHECK(m.stages(i).share() == Approx(t.stages(i).share()));
  }
  // The line as one collector prints it, but for the p99 (an upper bound here).
  const std::string line_head = t.line().substr(0, t.line().find(" p99 "));
  CHECK(m.line().substr(0, m.line().find(" p99 ")) == line_head);
  CHECK(m.line().substr(m.line().rfind('|')) == t.line().substr(t.line().rfind('|')));
}

TEST_CASE("watch_merge_keeps_groups_of_different_collectors_apart_and_their_notes") {
  WatchHub a, b;
  auto ca = a.Subscribe(WatchFilter{}, [] {}, 0);
  auto cb = b.Subscribe(WatchFilter{}, [] {}, 0);
  DispatchReads(&a, "nqn.a", 3, 1'000, "nvme0n1");
  DispatchReads(&b, "nqn.b", 5, 1'000, "nvme1n1");
  v1::WatchUpdate part_b = OneInterval(&b, cb);
  part_b.add_notes("from b");
  const v1::WatchUpdate part_a = OneInterval(&a, ca);
  // B ran ahead and sent two intervals before A's one: both count.
  const v1::WatchUpdate merged = MergeWatchUpdates(part_a, {part_b, part_b});
  REQUIRE(merged.groups_size() == 2);
  CHECK(merged.groups(0).name() == "read 4KiB nvme0n1");
  CHECK(merged.groups(0).sampled() == 3);
  CHECK(merged.groups(0).line() == part_a.groups(0).line());
  CHECK(merged.groups(1).name() == "read 4KiB nvme1n1");
  CHECK(merged.groups(1).sampled() == 10);
  CHECK(merged.groups(1).line().find("10 sampled (10.0/s)") != std::string::npos);
  CHECK(merged.notes_size() == 2);
  CHECK(merged.interval_end_wall_ns() == part_a.interval_end_wall_ns());
}

namespace {

// A loop device's command as the local block hooks record it: no subsystem, no target side.
v1::Record LocalRead(int i) {
  std::vector<uint64_t> stamps(NTPROF_HOST_STAMPS, 0);
  const uint64_t h0 = 2'000'000'000 + static_cast<uint64_t>(i) * 1'000'000;
  stamps[NTPROF_H0_BLOCK_START] = h0;
  stamps[NTPROF_H1_DRIVER_SUBMIT] = h0 + 500;
  stamps[NTPROF_H5_BLOCK_DONE] = h0 + 30'500;
  CommandId id{.nqn = "", .cntlid = 0, .qid = 0, .cid = 0, .slba = 8u * static_cast<uint32_t>(i)};
  v1::Record r = MakeRecord(v1::ROLE_HOST, id, stamps, "loop0");
  r.set_transport(v1::TRANSPORT_LOCAL);
  r.set_nsid(0);
  return r;
}

}  // namespace

// Issue 41 item 10: in a session that also selected targets, a local device's records waited a
// join window for a target half that cannot exist, then left as host-only leftovers that no
// histogram and no watch line counted. The histograms carry the session.
TEST_CASE("local_device_records_of_a_joined_session_reach_metrics_and_watch_at_once") {
  Cluster c(20);
  c.Start();
  auto watcher = c.registry->watch().Subscribe(WatchFilter{}, [] {}, c.now);
  std::vector<v1::AgentMessage> messages = RecordingMessages(c.host_file);
  std::vector<v1::Record> local;
  for (int i = 0; i < 5; ++i) local.push_back(LocalRead(i));
  messages.insert(messages.begin() + 1, Batch("test", local, 0));  // after SessionOpened
  uint64_t seq = 1;
  for (auto& m : messages) {
    m.set_seq(seq++);
    REQUIRE(c.registry->Ingest(&c.host, m).ok());
  }
  c.Feed(&c.target, c.target_file);
  // No window has passed: the local commands are not waiting for a target half.
  const std::string metrics = c.metrics.RenderPrometheus();
  CHECK_THAT(metrics, Catch::Contains("ntprof_stage_latency_seconds_count{session=\"test\","
                                      "stage=\"local_device\",op=\"read\",role=\"host\"} 5"));
  CHECK_THAT(metrics, Catch::Contains("ntprof_stage_latency_seconds_count{session=\"test\","
                                      "stage=\"storage\",op=\"read\",role=\"joined\"} 20"));
  CHECK(c.metrics.Get(Counter::kJoinHostOnly) == 0);
  c.now += 1'000'000'000;
  c.registry->Tick();
  auto update = watcher->Next();
  REQUIRE(update.has_value());
  uint64_t local_sampled = 0, joined_sampled = 0;
  for (const auto& g : update->groups()) {
    if (g.name().find("loop0") != std::string::npos) local_sampled += g.sampled();
    if (g.scope() == "joined") joined_sampled += g.sampled();
  }
  CHECK(local_sampled == 5);
  CHECK(joined_sampled == 20);
}

namespace {

RegistryOptions StandingOptions(const TempDir& dir, uint32_t rate) {
  RegistryOptions options;
  options.data_dir = dir.path() / "data";
  options.standing.set_session("fleet");
  options.standing.set_sample_rate(rate);
  options.standing.add_subsystems("nqn.2024-01.io.ntprof:test");
  return options;
}

const v1::RecordingSettings* StartSent(const FakeChannel& channel, const std::string& session) {
  for (const auto& m : channel.sent) {
    if (m.has_start() && m.start().settings().session() == session) return &m.start().settings();
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the_standing_session_takes_every_agent_and_survives_restarts_with_its_settings") {
  TempDir dir;
  CollectorMetrics metrics;
  auto opened = SessionRegistry::Open(StandingOptions(dir, 1000), &metrics);
  REQUIRE(opened.ok());
  auto registry = std::move(*opened);
  CHECK(registry->standing_session() == "fleet");
  const v1::SessionInfo before = SessionNamed(*registry, "fleet");
  CHECK(before.standing());
  CHECK(before.state() == v1::SESSION_RUNNING);
  CHECK(before.agents_size() == 0);  // it waits for agents

  FakeChannel host;
  REQUIRE(registry->AttachAgent(&host, Hello("host1", v1::ROLE_HOST), "test").ok());
  const v1::RecordingSettings* fleet = StartSent(host, "fleet");
  REQUIRE(fleet != nullptr);
  CHECK(fleet->sample_rate() == 1000);
  CHECK(fleet->subsystems(0) == "nqn.2024-01.io.ntprof:test");
  CHECK(fleet->duration_s() == 0);
  CHECK(fleet->salt() == registry->fleet_salt());
  const v1::RecordingSettings first = *fleet;

  // It cannot be stopped by hand; an investigation runs beside it with the same (fleet) salt.
  CHECK(registry->StopSession("fleet").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  v1::StartSessionRequest investigation;
  investigation.set_name("slow");
  investigation.mutable_settings()->set_sample_rate(10);
  REQUIRE(registry->StartSession(investigation).ok());
  const v1::RecordingSettings* slow = StartSent(host, "slow");
  REQUIRE(slow != nullptr);
  CHECK(slow->salt() == first.salt());

  // The collector is killed and restarts on the same data dir and configuration; the agent
  // restarted too (a new epoch, recording nothing): it gets the standing session as it was.
  registry.reset();
  opened = SessionRegistry::Open(StandingOptions(dir, 1000), &metrics);
  REQUIRE(opened.ok());
  registry = std::move(*opened);
  FakeChannel back;
  REQUIRE(registry->AttachAgent(&back, Hello("host1", v1::ROLE_HOST, 2), "test").ok());
  const v1::RecordingSettings* resumed = StartSent(back, "fleet");
  REQUIRE(resumed != nullptr);
  CHECK(resumed->DebugString() == first.DebugString());
  CHECK(SessionNamed(*registry, "fleet").agents_size() == 1);

  // A standing session keeps its settings for its name: another rate is refused, clearly.
  registry.reset();
  auto changed = SessionRegistry::Open(StandingOptions(dir, 100), &metrics);
  REQUIRE(!changed.ok());
  CHECK_THAT(std::string(changed.status().message()),
             Catch::Contains("configure another name"));

  // No longer configured: it stops, and says why.
  RegistryOptions plain;
  plain.data_dir = dir.path() / "data";
  opened = SessionRegistry::Open(plain, &metrics);
  REQUIRE(opened.ok());
  const v1::SessionInfo after = SessionNamed(**opened, "fleet");
  CHECK(after.state() == v1::SESSION_STOPPED);
  CHECK_THAT(after.notes(0), Catch::Contains("no longer the collector's standing session"));
}
