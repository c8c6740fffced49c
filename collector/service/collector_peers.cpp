#include "collector_peers.h"

#include <algorithm>
#include <set>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "hash_ring.h"
#include "loss_counters.h"
#include "ntp_writer.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {
namespace {

constexpr auto kFetchDeadline = std::chrono::seconds(120);

std::string PathSafe(const std::string& address) {
  std::string out;
  for (char c : address) out += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return out;
}

// Removes the scratch directory with the last reference.
std::shared_ptr<const std::filesystem::path> ScratchDir(std::filesystem::path dir) {
  return std::shared_ptr<const std::filesystem::path>(
      new std::filesystem::path(std::move(dir)), [](const std::filesystem::path* p) {
        std::error_code ec;
        std::filesystem::remove_all(*p, ec);
        delete p;
      });
}

}  // namespace

std::vector<std::string> CollectorPeers::Addresses() const {
  std::vector<std::string> out = common::SplitMemberList(options_.peers);
  if (!options_.peers_file.empty()) {
    auto more = common::ReadMemberFile(options_.peers_file);
    if (more.ok()) {
      out.insert(out.end(), more->begin(), more->end());
    } else {
      spdlog::warn("peers file: {}", std::string(more.status().message()));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool CollectorPeers::Forwarded(const grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  return metadata.find(kForwardedKey) != metadata.end();
}

void CollectorPeers::MarkForwarded(grpc::ClientContext* context) {
  context->AddMetadata(kForwardedKey, "1");
}

std::shared_ptr<v1::Collector::Stub> CollectorPeers::StubFor(const std::string& address,
                                                              std::string* error) {
  std::lock_guard lock(mu_);
  if (auto it = stubs_.find(address); it != stubs_.end()) return it->second;
  std::shared_ptr<grpc::Channel> channel;
  if (!cli::OpenChannel(address, options_.tls, &channel, error)) return nullptr;
  auto stub = std::shared_ptr<v1::Collector::Stub>(v1::Collector::NewStub(channel));
  stubs_[address] = stub;
  return stub;
}

template <typename Call>
std::vector<std::string> CollectorPeers::ForEachPeer(const std::vector<grpc::StatusCode>& fine,
                                                     Call call,
                                                     std::chrono::seconds deadline) {
  std::vector<std::string> errors;
  for (const std::string& peer : Addresses()) {
    std::string error;
    auto stub = StubFor(peer, &error);
    if (!stub) {
      errors.push_back(absl::StrCat("collector ", peer, ": ", error));
      continue;
    }
    grpc::ClientContext context;
    MarkForwarded(&context);
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    const grpc::Status st = call(peer, *stub, &context);
    if (!st.ok() && std::find(fine.begin(), fine.end(), st.error_code()) == fine.end())
      errors.push_back(absl::StrCat("collector ", peer, ": ", st.error_message()));
  }
  return errors;
}

std::vector<std::string> CollectorPeers::StartSession(const v1::StartSessionRequest& request) {
  // A peer that already knows the session (an agent's SessionOpened got there first) or has
  // none of the agents connected takes it over when their records arrive: not an error.
  return ForEachPeer({grpc::StatusCode::ALREADY_EXISTS, grpc::StatusCode::FAILED_PRECONDITION,
                      grpc::StatusCode::NOT_FOUND},
                     [&](const std::string&, v1::Collector::Stub& stub, grpc::ClientContext* c) {
                       v1::SessionInfo reply;
                       return stub.StartSession(c, request, &reply);
                     });
}

std::vector<std::string> CollectorPeers::StopSession(const std::string& name) {
  v1::StopSessionRequest request;
  request.set_name(name);
  return ForEachPeer({grpc::StatusCode::NOT_FOUND},
                     [&](const std::string&, v1::Collector::Stub& stub, grpc::ClientContext* c) {
                       v1::SessionInfo reply;
                       return stub.StopSession(c, request, &reply);
                     });
}

std::vector<std::pair<std::string, v1::ListSessionsReply>> CollectorPeers::List(
    std::vector<std::string>* errors) {
  std::vector<std::pair<std::string, v1::ListSessionsReply>> out;
  for (std::string& e : ForEachPeer(
           {}, [&](const std::string& peer, v1::Collector::Stub& stub, grpc::ClientContext* c) {
             v1::ListSessionsReply reply;
             grpc::Status st = stub.ListSessions(c, v1::ListSessionsRequest(), &reply);
             if (st.ok()) out.emplace_back(peer, std::move(reply));
             return st;
           })) {
    errors->push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<CollectorPeers::Fetched> CollectorPeers::Fetch(const std::string& session) {
  Fetched fetched;
  fetched.session.name = session;
  uint64_t n;
  {
    std::lock_guard lock(mu_);
    n = ++fetches_;
  }
  const auto dir = options_.scratch_dir / absl::StrCat("fetch-", getpid(), "-", n);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  fetched.scratch = ScratchDir(dir);
  bool found = false;
  std::vector<std::string> errors;
  // The peers' notes (lost batches, refusals) and whether it still runs there.
  std::vector<std::string> list_errors;
  for (const auto& [peer, reply] : List(&list_errors)) {
    for (const auto& info : reply.sessions()) {
      if (info.name() != session) continue;
      fetched.session.running |= info.state() == v1::SESSION_RUNNING;
      for (const auto& note : info.notes()) fetched.session.notes.push_back(note);
      for (const auto& a : info.agents()) {
        if (!a.refusal().empty())
          fetched.session.notes.push_back(absl::StrCat(a.hostname(), " refused to record: ", a.refusal()));
      }
    }
  }
  absl::Status write_status;
  errors = ForEachPeer(
      {grpc::StatusCode::NOT_FOUND},
      [&](const std::string& peer, v1::Collector::Stub& stub, grpc::ClientContext* context) {
        v1::ExportRequest request;
        request.set_session(session);
        auto reader = stub.Export(context, request);
        v1::ExportMessage m;
        std::unique_ptr<NtpWriter> writer;
        std::map<std::string, int> segments;  // per "<hostname>@<peer>-<role>"
        while (write_status.ok() && reader->Read(&m)) {
          if (m.has_file()) {
            writer.reset();
            StoredFile file;
            file.agent.hostname =
                absl::StrCat(m.file().header().hostname(), "@", PathSafe(peer));
            file.role = m.file().header().role();
            file.segment = segments[absl::StrCat(file.agent.hostname, "-", file.role)]++;
            file.path = (dir / absl::StrCat(PathSafe(peer), "-", m.file().name())).string();
            auto created = NtpWriter::Create(file.path, m.file().header());
            if (!created.ok()) {
              write_status = created.status();
              break;
            }
            writer = std::move(*created);
            fetched.session.files.push_back(file);
          } else if (m.has_batch() && writer) {
            write_status = writer->WriteBatch(m.batch());
          } else if (m.has_trailer() && writer) {
            write_status = writer->Finalize(m.trailer());
            writer.reset();
          }
        }
        if (!write_status.ok()) context->TryCancel();
        const grpc::Status st = reader->Finish();
        found |= st.ok();
        return st;
      },
      kFetchDeadline);
  if (!write_status.ok()) return write_status;
  // A peer that cannot be asked leaves its share out: the report says so.
  for (const std::string& e : errors)
    fetched.session.notes.push_back(absl::StrCat(e, " (its share of the records is missing)"));
  if (!found && errors.empty()) return absl::NotFoundError(absl::StrCat("no peer has session '", session, "'"));
  return fetched;
}

v1::ListSessionsReply MergeLists(
    v1::ListSessionsReply local,
    const std::vector<std::pair<std::string, v1::ListSessionsReply>>& peers) {
  std::map<std::string, v1::SessionInfo*> by_name;
  for (auto& s : *local.mutable_sessions()) by_name[s.name()] = &s;
  for (const auto& [peer, reply] : peers) {
    for (const v1::SessionInfo& theirs : reply.sessions()) {
      auto it = by_name.find(theirs.name());
      if (it == by_name.end()) {
        v1::SessionInfo* added = local.add_sessions();
        *added = theirs;
        by_name[theirs.name()] = added;
        continue;
      }
      v1::SessionInfo& ours = *it->second;
      if (theirs.state() == v1::SESSION_STOPPED) ours.set_state(v1::SESSION_STOPPED);
      if (theirs.start_wall_ns() != 0 &&
          (ours.start_wall_ns() == 0 || theirs.start_wall_ns() < ours.start_wall_ns()))
        ours.set_start_wall_ns(theirs.start_wall_ns());
      ours.set_stop_wall_ns(std::max(ours.stop_wall_ns(), theirs.stop_wall_ns()));
      ours.set_matched(ours.matched() + theirs.matched());
      ours.set_host_only(ours.host_only() + theirs.host_only());
      ours.set_target_only(ours.target_only() + theirs.target_only());
      std::set<std::string> notes(ours.notes().begin(), ours.notes().end());
      for (const auto& note : theirs.notes()) {
        if (notes.insert(note).second) ours.add_notes(note);
      }
      for (const v1::SessionAgent& a : theirs.agents()) {
        v1::SessionAgent* mine = nullptr;
        for (auto& b : *ours.mutable_agents()) {
          if (b.hostname() == a.hostname()) mine = &b;
        }
        if (!mine) {
          *ours.add_agents() = a;
          continue;
        }
        mine->set_records(mine->records() + a.records());
        mine->set_batches(mine->batches() + a.batches());
        mine->set_connected(mine->connected() || a.connected());
        mine->set_opened(mine->opened() || a.opened());
        if (mine->refusal().empty()) mine->set_refusal(a.refusal());
        // Losses travel to one collector only (the agent's home): the sum counts them once.
        AddLosses(a.losses(), mine->mutable_losses());
      }
    }
    for (const v1::ConnectedAgent& a : reply.agents()) {
      v1::ConnectedAgent* added = local.add_agents();
      *added = a;
      added->set_peer(absl::StrCat(a.peer(), " at collector ", peer));
    }
  }
  return local;
}

}  // namespace ntprof::collector
