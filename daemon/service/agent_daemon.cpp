#include "agent_daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent_engine.h"
#include "hook_decisions.h"
#include "host_identity.h"
#include "spdlog/spdlog.h"
#include "unix_socket_path.h"

namespace ntprof::agent {
absl::StatusOr<std::unique_ptr<AgentDaemon>> AgentDaemon::Start(AgentDaemonOptions options) {
  std::unique_ptr<AgentDaemon> d(new AgentDaemon(std::move(options)));
  if (absl::Status st = d->Init(); !st.ok()) {
    d->Shutdown();
    return st;
  }
  return d;
}

AgentDaemon::~AgentDaemon() { Shutdown(); }

absl::Status AgentDaemon::Init() {
  const AgentConfig& config = options_.agent;
  // Flag mistakes first, before anything slow.
  auto material = common::LoadTls(options_.tls);
  if (!material.ok()) return material.status();
  std::vector<std::shared_ptr<grpc::ServerCredentials>> tcp_credentials;
  for (const std::string& address : options_.tcp_listen) {
    auto creds = common::CredentialsFor(address, options_.tls, *material);
    if (!creds.ok()) return creds.status();
    tcp_credentials.push_back(*creds);
  }
  // Refuse a second agent before touching its spool.
  if (absl::Status st = PrepareSocketPath(options_.socket_path, options_.socket_group); !st.ok())
    return st;
  std::vector<std::string> collectors = options_.collectors;
  if (!options_.ring_file.empty()) {
    auto members = common::ReadMemberFile(options_.ring_file);
    if (!members.ok()) return members.status();
    collectors = *members;
  }
  ring_ = std::make_unique<CollectorRing>(
      CollectorRingOptions{.spool = options_.spool,
                           .spool_per_member =
                               !options_.ring_file.empty() || collectors.size() > 1,
                           .home_key = config.name},
      options_.collector_channel, [this](const Spool& spool) { return Hello(spool); },
      [this](const v1::CollectorMessage& m) {
        // Every collector of the ring starts and stops the same session: the first start is
        // obeyed (a recording is known by its session name), later ones find it running.
        if (m.has_start()) {
          recordings_->StartForCollector(m.start().settings());
        } else if (m.has_stop()) {
          auto st = recordings_->Stop(m.stop().session(), "stopped by the collector");
          if (!st.ok())
            spdlog::info("stop {}: {}", m.stop().session(), std::string(st.status().message()));
        }
      });
  if (absl::Status st = ring_->SetMembers(collectors); !st.ok()) return st;

  if (!config.spdk.empty()) {
    // SPDK processes, not the kernel: their probes are found per session (processes come and go).
    spdlog::info("recording SPDK {} processes: {}", RoleName(config.role),
                 absl::StrJoin(config.spdk, ", "));
  } else {
    // A trial load and attach: READY means the role's programs attach on this kernel. A failure is
    // not fatal (a module may be loaded later); sessions then report it in SessionClosed.error.
    SessionOptions trial{
        .role = config.role, .transport = config.transport, .btf_path = config.btf_path};
    auto engine = AgentEngine::Start(trial, facts_);
    HookPlan plan = engine.ok() ? (*engine)->plan()
                                : PlanHooks(config.role, config.transport, facts_,
                                            PlanInputs{.external_btf = !config.btf_path.empty()});
    if (!engine.ok()) {
      spdlog::warn(
          "the {} hooks do not attach yet: {}; recordings will fail until this is fixed "
          "(see `ntprofd probe --role {}`)",
          RoleName(config.role), std::string(engine.status().message()), RoleName(config.role));
    } else {
      spdlog::info("{}/{} hooks attach on this kernel", RoleName(config.role),
                   TransportName(config.transport));
    }
    engine = absl::UnknownError("released");  // detach before recordings load their own
    google::protobuf::RepeatedPtrField<v1::HookDecision> hooks;
    ToHookDecisions(plan, &hooks);
    hooks_.assign(hooks.begin(), hooks.end());
  }

  recordings_ = std::make_unique<Recordings>(config, ring_.get(), &facts_);
  service_ = std::make_unique<AgentService>(&options_.agent, &facts_, recordings_.get(),
                                            ring_.get());

  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  builder.AddListeningPort("unix:" + options_.socket_path, grpc::InsecureServerCredentials());
  tcp_ports_.resize(options_.tcp_listen.size());
  for (size_t i = 0; i < options_.tcp_listen.size(); ++i)
    builder.AddListeningPort(options_.tcp_listen[i], tcp_credentials[i], &tcp_ports_[i]);
  // The socket is created by BuildAndStart: no moment where others may connect.
  const mode_t old_umask = umask(0117);
  server_ = builder.BuildAndStart();
  umask(old_umask);
  if (!server_) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve on unix:", options_.socket_path,
                     options_.tcp_listen.empty() ? "" : " or a --listen address",
                     ": is the address in use or the directory not writable?"));
  }
  for (size_t i = 0; i < tcp_ports_.size(); ++i) {
    if (tcp_ports_[i] == 0)
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.tcp_listen[i]));
  }
  if (absl::Status st = SecureSocket(options_.socket_path, options_.socket_group); !st.ok())
    return st;
  for (size_t i = 0; i < tcp_ports_.size(); ++i)
    spdlog::info("also serving on {} (port {})", options_.tcp_listen[i], tcp_ports_[i]);
  ring_->Start();
  if (!options_.ring_file.empty()) ring_watch_ = std::thread([this] { WatchRingFile(); });
  const std::vector<std::string> members = ring_->Members();
  spdlog::info("ntprofd {} serving on unix:{}{}", options_.agent.name, options_.socket_path,
               members.empty()       ? std::string(", no collector")
               : members.size() == 1 ? absl::StrCat(", collector ", members[0])
                                     : absl::StrCat(", collectors ", absl::StrJoin(members, ", "),
                                                    " (home ", ring_->HomeMember(), ")"));
  return absl::OkStatus();
}

// The ring file is re-read every ring_poll: a changed member list reshapes the ring (new members
// get a link; removed ones keep theirs until their spool is drained).
void AgentDaemon::WatchRingFile() {
  std::vector<std::string> current = ring_->Members();
  std::string last_error;
  std::unique_lock lock(ring_watch_mu_);
  while (!ring_watch_cv_.wait_for(lock, options_.ring_poll, [&] { return ring_watch_stop_; })) {
    lock.unlock();
    auto members = common::ReadMemberFile(options_.ring_file);
    if (!members.ok()) {
      if (std::string(members.status().message()) != last_error) {
        last_error = std::string(members.status().message());
        spdlog::warn("ring file: {}; keeping the ring {}", last_error,
                     absl::StrJoin(current, ", "));
      }
    } else {
      last_error.clear();
      common::HashRing wanted(*members);
      if (wanted.members() != current) {
        spdlog::info("ring file {}: collectors {} (were {})", options_.ring_file,
                     absl::StrJoin(wanted.members(), ", "), absl::StrJoin(current, ", "));
        if (absl::Status st = ring_->SetMembers(*members); !st.ok()) {
          spdlog::error("ring file: {}", std::string(st.message()));
        } else {
          current = wanted.members();
        }
      }
    }
    ring_->Retire();
    lock.lock();
  }
}

v1::AgentHello AgentDaemon::Hello(const Spool& spool) const {
  const AgentConfig& c = options_.agent;
  v1::AgentHello h;
  h.set_hostname(c.name);
  h.set_role(ToProto(c.role));
  h.set_transport(c.transport);
  h.set_boot_id(BootId());
  h.set_agent_version(NTPROF_VERSION);
  for (const auto& d : hooks_) *h.add_hooks() = d;
  h.set_stream_epoch(spool.epoch());
  h.set_kernel_release(KernelRelease());
  for (const std::string& s : recordings_->CollectorSessions()) h.add_recording_sessions(s);
  return h;
}

void AgentDaemon::Shutdown(const std::string& stop_reason) {
  if (shut_down_) return;
  shut_down_ = true;
  // Recordings first: their last batch and SessionClosed reach the spool, and the link still has
  // a moment to send them.
  if (recordings_) recordings_->StopAll(stop_reason);
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (ring_watch_.joinable()) {
    {
      std::lock_guard lock(ring_watch_mu_);
      ring_watch_stop_ = true;
    }
    ring_watch_cv_.notify_all();
    ring_watch_.join();
  }
  if (ring_) {
    const bool has_collector = !ring_->Members().empty();
    for (int i = 0; has_collector && i < 20 && ring_->AllConnected() &&
                    ring_->Stats().unacked_messages > 0;
         ++i)
      usleep(100 * 1000);
    ring_->Stop();
  }
  if (server_) server_->Wait();
  if (server_) unlink(options_.socket_path.c_str());
}

}  // namespace ntprof::agent
