// The collector over real gRPC: synthetic agents on unix and TCP sockets, reports against the file
// report of the same records, a collector process killed and restarted under replaying agents,
// garbage on the port, TLS and mutual TLS.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "collector_server.h"
#include "recording_messages.h"
#include "recording_set.h"
#include "recording_writer.h"
#include "report_json.h"
#include "report_text.h"
#include "synthetic_agent.h"
#include "temp_dir.h"
#include "test_certificates.h"

using namespace ntprof;
using namespace ntprof::collector;
using namespace ntprof::testing;

namespace {

CommandTiming Timing(int i) {
  return {
      300, 800, 470, 200, i % 2 == 0 ? 5'000u : 15'000u, 200, 300, i % 3 == 0 ? 50'000u : 70'000u,
      210, 300};
}

// Each channel its own connection: gRPC otherwise shares one between channels to the same address,
// and a new channel to a restarted collector could look READY on the dead process's connection.
std::shared_ptr<grpc::Channel> Plain(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

bool Ready(const std::shared_ptr<grpc::Channel>& channel, int seconds = 10) {
  return channel->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::seconds(seconds));
}

v1::SessionInfo StartSession(v1::Collector::Stub& stub, const std::string& name) {
  grpc::ClientContext context;
  v1::StartSessionRequest request;
  request.set_name(name);
  request.mutable_settings()->set_sample_rate(10);
  v1::SessionInfo info;
  const grpc::Status status = stub.StartSession(&context, request, &info);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return info;
}

void StopSession(v1::Collector::Stub& stub, const std::string& name) {
  grpc::ClientContext context;
  v1::StopSessionRequest request;
  request.set_name(name);
  v1::SessionInfo info;
  REQUIRE(stub.StopSession(&context, request, &info).ok());
}

std::string RemoteReport(v1::Collector::Stub& stub, const std::string& session, bool json) {
  grpc::ClientContext context;
  v1::ReportRequest request;
  request.set_session(session);
  request.set_detail(true);
  request.set_format(json ? v1::OUTPUT_JSON : v1::OUTPUT_TEXT);
  v1::RenderedOutput out;
  const grpc::Status status = stub.Report(&context, request, &out);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return out.text();
}

Report FileReport(const std::vector<std::string>& files) {
  auto set = RecordingSet::Open(files);
  REQUIRE(set.ok());
  auto report = set->BuildReport();
  REQUIRE(report.ok());
  return *report;
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

std::string HttpGet(int port, const std::string& path) {
  const int fd = ConnectLoopback(port);
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, static_cast<size_t>(n));
  close(fd);
  return response;
}

// One host and one target recording of session `session`, as files and as synthetic agents.
struct RecordedRun {
  TempDir dir;
  std::string host_file = dir.File("host.ntp");
  std::string target_file = dir.File("target.ntp");
  SyntheticAgent host{"host1", v1::ROLE_HOST};
  SyntheticAgent target{"target1", v1::ROLE_TARGET};

  RecordedRun(int commands, const std::string& session) {
    // The trailer ends after the last command (RunSpec's default span is for short runs).
    const RunSpec spec{.commands = commands,
                       .session = session,
                       .span_ns = static_cast<uint64_t>(commands + 10) * 1'000'000};
    WriteRun(host_file, target_file, spec, Timing);
  }
};

// An ntprof-collector process on `socket` storing into `data`.
pid_t LaunchCollector(const std::string& socket, const std::string& data) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl(NTPROF_COLLECTOR_BIN, NTPROF_COLLECTOR_BIN, "--listen", socket.c_str(), "--data-dir",
          data.c_str(), "--metrics-listen", "", "--log-level", "warn", nullptr);
    _exit(127);
  }
  return pid;
}

void StopCollector(pid_t collector) {
  kill(collector, SIGTERM);
  int status = 0;
  waitpid(collector, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST_CASE("grpc_session_report_equals_the_file_report_of_the_same_records") {
  RecordedRun run(500, "grpc-run");
  ServerOptions options;
  options.listen = {"unix:" + run.dir.File("collector.sock")};
  options.metrics_listen = "localhost:0";
  options.data_dir = run.dir.File("data");
  options.tick_s = 0.1;
  CollectorServer server(options);
  REQUIRE(server.Start().ok());
  auto channel = Plain(options.listen[0]);
  REQUIRE(Ready(channel));
  auto stub = v1::Collector::NewStub(channel);

  REQUIRE(run.host.Connect(channel));
  REQUIRE(run.target.Connect(channel));
  // A watch client for the whole cluster, before anything is recorded.
  grpc::ClientContext watch_context;
  watch_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto watch = stub->Watch(&watch_context, v1::WatchRequest{});

  StartSession(*stub, "grpc-run");
  REQUIRE(run.host.WaitControl(1));
  REQUIRE(run.target.WaitControl(1));
  CHECK(run.host.control()[0].start().settings().session() == "grpc-run");
  run.host.SpoolRecording(run.host_file);
  run.target.SpoolRecording(run.target_file);
  REQUIRE(run.host.SendAll());
  REQUIRE(run.target.SendAll());
  REQUIRE(run.host.WaitAcked(run.host.last_seq()));
  REQUIRE(run.target.WaitAcked(run.target.last_seq()));

  // Watch shows the joined commands within an interval or two.
  v1::WatchUpdate update;
  uint64_t watched = 0;
  while (watched < 500 && watch->Read(&update)) {
    for (const auto& g : update.groups()) {
      CHECK(g.scope() == "joined");
      watched += g.sampled();
    }
  }
  CHECK(watched == 500);
  watch_context.TryCancel();
  (void)watch->Finish();

  StopSession(*stub, "grpc-run");
  const Report files = FileReport({run.host_file, run.target_file});
  CHECK(RemoteReport(*stub, "grpc-run", false) == RenderText(files, TextOptions{true}));
  nlohmann::json remote = nlohmann::json::parse(RemoteReport(*stub, "grpc-run", true));
  nlohmann::json local = ToJson(files);
  CHECK(remote["source"] == "session grpc-run");
  remote.erase("source");
  local.erase("source");
  CHECK(remote == local);

  // Export gives back one file per agent with every record.
  grpc::ClientContext export_context;
  v1::ExportRequest export_request;
  export_request.set_session("grpc-run");
  auto exported = stub->Export(&export_context, export_request);
  v1::ExportMessage message;
  std::vector<std::string> names;
  uint64_t records = 0, trailers = 0;
  while (exported->Read(&message)) {
    if (message.has_file()) names.push_back(message.file().name());
    if (message.has_batch()) records += static_cast<uint64_t>(message.batch().records_size());
    if (message.has_trailer()) ++trailers;
  }
  REQUIRE(exported->Finish().ok());
  CHECK(names == std::vector<std::string>{"host1-host.ntp", "target1-target.ntp"});
  CHECK(records == 1000);
  CHECK(trailers == 2);

  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  CHECK(metrics.rfind("HTTP/1.0 200 OK", 0) == 0);
  CHECK(metrics.find("ntprof_collector_records_total 1000\n") != std::string::npos);
  CHECK(metrics.find("ntprof_collector_join_matched_total 500\n") != std::string::npos);
  CHECK(metrics.find("ntprof_stage_latency_seconds_count{session=\"grpc-run\",stage=\"storage\","
                     "op=\"read\",role=\"joined\"} 500") != std::string::npos);
  CHECK(HttpGet(server.metrics_port(), "/other").rfind("HTTP/1.0 404", 0) == 0);
}

TEST_CASE("grpc_unknown_session_and_clashing_name_are_errors_without_side_effects") {
  TempDir dir;
  ServerOptions options;
  options.listen = {"unix:" + dir.File("c.sock")};
  options.metrics_listen = "";
  options.data_dir = dir.File("data");
  CollectorServer server(options);
  REQUIRE(server.Start().ok());
  auto channel = Plain(options.listen[0]);
  REQUIRE(Ready(channel));
  auto stub = v1::Collector::NewStub(channel);
  SyntheticAgent host("host1", v1::ROLE_HOST);
  REQUIRE(host.Connect(channel));
  StartSession(*stub, "one");
  grpc::ClientContext c1, c2;
  v1::StartSessionRequest again;
  again.set_name("one");
  again.mutable_settings()->set_sample_rate(5);
  v1::SessionInfo info;
  CHECK(stub->StartSession(&c1, again, &info).error_code() == grpc::StatusCode::ALREADY_EXISTS);
  v1::ReportRequest report;
  report.set_session("none");
  v1::RenderedOutput out;
  CHECK(stub->Report(&c2, report, &out).error_code() == grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext c3;
  v1::ListSessionsReply list;
  REQUIRE(stub->ListSessions(&c3, {}, &list).ok());
  REQUIRE(list.sessions_size() == 1);
  CHECK(list.sessions(0).settings().sample_rate() == 10);
  CHECK(server.metrics()->Get(Counter::kRequestsRejected) == 2);
}

TEST_CASE("grpc_collector_killed_and_restarted_counts_every_record_once") {
  RecordedRun run(20'000, "restart");
  const std::string socket = "unix:" + run.dir.File("collector.sock");
  const std::string data = run.dir.File("data");
  auto launch = [&] { return LaunchCollector(socket, data); };
  pid_t collector = launch();
  auto channel = Plain(socket);
  REQUIRE(Ready(channel));
  auto stub = v1::Collector::NewStub(channel);
  REQUIRE(run.host.Connect(channel));
  REQUIRE(run.target.Connect(channel));
  StartSession(*stub, "restart");
  run.host.SpoolRecording(run.host_file);
  run.target.SpoolRecording(run.target_file);

  // Everything goes out without waiting for acks; the collector dies in the middle of it.
  REQUIRE(run.host.SendAll());
  kill(collector, SIGKILL);
  waitpid(collector, nullptr, 0);
  const uint64_t acked_before_kill = run.host.acked();
  INFO("host: " << acked_before_kill << " of " << run.host.last_seq() << " acked before the kill");

  collector = launch();
  channel = Plain(socket);
  REQUIRE(Ready(channel));
  stub = v1::Collector::NewStub(channel);
  if (!run.host.Connect(channel)) FAIL("host reconnect: " << run.host.last_error());
  if (!run.target.Connect(channel)) FAIL("target reconnect: " << run.target.last_error());
  CHECK(run.host.welcome_acked() >= acked_before_kill);  // nothing acked was forgotten
  REQUIRE(run.host.SendAll());  // replays what was not acked, some of it already stored
  REQUIRE(run.target.SendAll());
  REQUIRE(run.host.WaitAcked(run.host.last_seq()));
  REQUIRE(run.target.WaitAcked(run.target.last_seq()));
  StopSession(*stub, "restart");

  const nlohmann::json report = nlohmann::json::parse(RemoteReport(*stub, "restart", true));
  const nlohmann::json files = ToJson(FileReport({run.host_file, run.target_file}));
  CHECK(report["records"] == files["records"]);
  CHECK(report["records"]["host"] == 20'000);
  CHECK(report["records"]["matched"] == 20'000);
  CHECK(report["groups"] == files["groups"]);
  run.host.Disconnect();
  run.target.Disconnect();
  StopCollector(collector);
}

// A collector restart cuts each agent's file in two (the second one a new segment). Only an agent
// that never closed the session gets the "not finalized" note, naming its file as Export does; an
// agent that closed it after the restart gets none.
TEST_CASE("grpc_report_after_a_collector_restart_notes_only_an_agent_that_did_not_close") {
  RecordedRun run(2'000, "outage");
  const std::string socket = "unix:" + run.dir.File("collector.sock");
  const std::string data = run.dir.File("data");
  pid_t collector = LaunchCollector(socket, data);
  auto channel = Plain(socket);
  REQUIRE(Ready(channel));
  auto stub = v1::Collector::NewStub(channel);
  REQUIRE(run.host.Connect(channel));
  REQUIRE(run.target.Connect(channel));
  StartSession(*stub, "outage");
  std::vector<v1::AgentMessage> host = RecordingMessages(run.host_file);
  std::vector<v1::AgentMessage> target = RecordingMessages(run.target_file);
  target.pop_back();  // the target's agent is killed: it never sends SessionClosed
  const size_t before_kill = host.size() / 2;
  auto send = [](SyntheticAgent& agent, const std::vector<v1::AgentMessage>& messages,
                 size_t from, size_t to) {
    for (size_t i = from; i < std::min(to, messages.size()); ++i) agent.Spool(messages[i]);
    REQUIRE(agent.SendAll());
    REQUIRE(agent.WaitAcked(agent.last_seq()));
  };
  send(run.host, host, 0, before_kill);
  send(run.target, target, 0, before_kill);
  kill(collector, SIGKILL);
  waitpid(collector, nullptr, 0);

  collector = LaunchCollector(socket, data);
  channel = Plain(socket);
  REQUIRE(Ready(channel));
  stub = v1::Collector::NewStub(channel);
  if (!run.host.Connect(channel)) FAIL("host reconnect: " << run.host.last_error());
  if (!run.target.Connect(channel)) FAIL("target reconnect: " << run.target.last_error());
  send(run.host, host, before_kill, host.size());
  send(run.target, target, before_kill, target.size());
  StopSession(*stub, "outage");

  const std::string report = RemoteReport(*stub, "outage", false);
  INFO(report);
  CHECK(report.find("host1-host") == std::string::npos);
  CHECK(report.find("note: target1-target-1.ntp: not finalized (the agent stopped without "
                    "closing it)") != std::string::npos);
  CHECK(report.find("target1-target.ntp") == std::string::npos);  // the segment cut by the kill
  run.host.Disconnect();
  run.target.Disconnect();
  StopCollector(collector);
}

TEST_CASE("grpc_garbage_half_open_and_oversized_input_do_not_hurt_the_collector") {
  TempDir dir;
  ServerOptions options;
  options.listen = {"localhost:0"};
  options.metrics_listen = "";
  options.data_dir = dir.File("data");
  options.max_message_bytes = 1 << 20;
  CollectorServer server(options);
  REQUIRE(server.Start().ok());
  const int port = server.ports()[0];

  std::mt19937 random(42);
  std::vector<int> open_sockets;
  for (int i = 0; i < 20; ++i) {
    const int fd = ConnectLoopback(port);
    std::string bytes = i % 2 == 0 ? "" : "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";  // a valid preface
    for (int b = 0; b < 4096 * (i + 1); ++b) bytes.push_back(static_cast<char>(random()));
    if (i % 5 != 4) (void)!write(fd, bytes.data(), bytes.size());  // every fifth: half-open, silent
    open_sockets.push_back(fd);
  }
  auto channel = Plain("localhost:" + std::to_string(port));
  REQUIRE(Ready(channel));
  auto stub = v1::Collector::NewStub(channel);
  grpc::ClientContext list_context;
  v1::ListSessionsReply list;
  CHECK(stub->ListSessions(&list_context, {}, &list).ok());

  // A batch larger than the receive limit ends that stream only.
  SyntheticAgent flood("flood", v1::ROLE_HOST);
  REQUIRE(flood.Connect(channel));
  v1::AgentMessage huge;
  huge.mutable_batch()->set_session("x");
  huge.mutable_batch()->mutable_batch()->add_records()->set_device(std::string(2 << 20, 'x'));
  flood.Spool(huge);
  flood.SendAll();
  CHECK(!flood.WaitAcked(1, std::chrono::seconds(2)));
  grpc::ClientContext again;
  CHECK(stub->ListSessions(&again, {}, &list).ok());
  for (int fd : open_sockets) close(fd);
}

TEST_CASE("grpc_plaintext_is_refused_on_a_non_local_address") {
  TempDir dir;
  ServerOptions options;
  options.listen = {"0.0.0.0:0"};
  options.metrics_listen = "";
  options.data_dir = dir.File("data");
  CollectorServer server(options);
  const absl::Status st = server.Start();
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(st.message()).find("--tls-cert") != std::string::npos);
}

TEST_CASE("grpc_mutual_tls_accepts_signed_agents_and_refuses_others") {
  TempDir dir;
  MakeTestCertificates(dir);

  ServerOptions options;
  options.listen = {"localhost:0"};
  options.metrics_listen = "localhost:0";
  options.data_dir = dir.File("data");
  options.tls = common::TlsFlags{dir.File("server.pem"), dir.File("server.key"),
                                 dir.File("ca.pem"), true, false};
  CollectorServer server(options);
  const absl::Status started = server.Start();
  INFO(started.message());
  REQUIRE(started.ok());
  const std::string address = "localhost:" + std::to_string(server.ports()[0]);
  auto read = [&](const std::string& name) {
    std::ifstream in(dir.File(name));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto call = [&](const std::string& cert, const std::string& key) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = read("ca.pem");
    if (!cert.empty()) {
      tls.pem_cert_chain = read(cert);
      tls.pem_private_key = read(key);
    }
    auto stub = v1::Collector::NewStub(grpc::CreateChannel(address, grpc::SslCredentials(tls)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ListSessionsReply list;
    return stub->ListSessions(&context, {}, &list);
  };
  CHECK(call("client.pem", "client.key").ok());
  CHECK(!call("rogue.pem", "rogue.key").ok());  // signed by no CA the collector trusts
  CHECK(!call("", "").ok());                    // no certificate at all
  CHECK(!Ready(Plain(address), 2));             // plaintext to a TLS port
}
