// ring_fleet: a fleet of synthetic agents that stream through ntprofd's own CollectorRing (the
// ring, the per-collector spools and links, the routing of records, counters, losses, opens and
// closes), so a test runs real collectors against the real agent code without BPF.
//
//   ring_fleet stream RING_FILE SPOOL_DIR OUT_DIR SESSION SECONDS [HOSTS TARGETS SUBSYSTEMS]
//     HOSTS host agents (host1..) and TARGETS target agents (target1..), each target exporting
//     SUBSYSTEMS subsystems that every host uses. The collectors are read from RING_FILE every
//     0.5 s (as ntprofd serve --ring-file does). On the session's start (from any collector) every
//     agent records once: for SECONDS, every 0.1 s, one read per host and subsystem, with known
//     stage durations; it writes what it sends to OUT_DIR/<agent>-<role>.ntp too (the file
//     report of the same records). Prints "recording", then "sent N" once every agent closed its
//     recording and every collector acked everything, then stays until killed.
//   ring_fleet owners MEMBERS COLLECTOR FILE...
//     Checks that every record in FILEs belongs to COLLECTOR on the ring MEMBERS (a comma list);
//     prints "owned N subsystems M" (the records and distinct subsystems checked).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "collector_ring.h"
#include "hash_ring.h"
#include "ntp_reader.h"
#include "ntp_writer.h"
#include "record_factory.h"

using namespace ntprof;

namespace {

constexpr auto kBatchEvery = std::chrono::milliseconds(100);
constexpr uint64_t kWallStart = 1'750'000'000'000'000'000ull;

struct Agent {
  std::string name;
  v1::Role role;
  int index = 0;  // 0-based within its role
  uint64_t mono_start = 0;
  std::unique_ptr<agent::CollectorRing> ring;
  std::atomic<bool> start{false};
  std::unique_ptr<NtpWriter> file;
  uint64_t sent = 0;
};

std::string Nqn(int target, int subsystem) {
  return absl::StrCat("nqn.2026-01.io.ntprof:target", target + 1, "-subsys", subsystem + 1);
}

v1::FileHeader HeaderOf(const Agent& a, const std::string& session) {
  v1::FileHeader h;
  h.set_hostname(a.name);
  h.set_kernel_release("6.1.0-test");
  h.set_boot_id("boot-" + a.name);
  h.set_role(a.role);
  h.set_transport(v1::TRANSPORT_TCP);
  h.set_sample_rate(1);
  h.set_salt(7);
  h.set_start_wall_ns(kWallStart);
  h.set_start_mono_ns(a.mono_start);
  h.set_agent_version("ring_fleet");
  h.set_session(session);
  return h;
}

int Stream(int argc, char** argv) {
  if (argc != 7 && argc != 10) {
    std::cerr << "usage: ring_fleet stream RING_FILE SPOOL_DIR OUT_DIR SESSION SECONDS "
                 "[HOSTS TARGETS SUBSYSTEMS]\n";
    return 2;
  }
  const std::string ring_file = argv[2];
  const std::filesystem::path spool_dir = argv[3], out_dir = argv[4];
  const std::string session = argv[5];
  const double seconds = std::stod(argv[6]);
  const int hosts = argc == 10 ? std::stoi(argv[7]) : 8;
  const int targets = argc == 10 ? std::stoi(argv[8]) : 4;
  const int subsystems = argc == 10 ? std::stoi(argv[9]) : 16;
  std::filesystem::create_directories(out_dir);

  std::vector<std::unique_ptr<Agent>> agents;
  for (int h = 0; h < hosts; ++h) {
    auto a = std::make_unique<Agent>();
    a->name = absl::StrCat("host", h + 1);
    a->role = v1::ROLE_HOST;
    a->index = h;
    a->mono_start = 1'000'000'000ull * (h + 1);
    agents.push_back(std::move(a));
  }
  for (int t = 0; t < targets; ++t) {
    auto a = std::make_unique<Agent>();
    a->name = absl::StrCat("target", t + 1);
    a->role = v1::ROLE_TARGET;
    a->index = t;
    a->mono_start = 500'000'000'000ull * (t + 1);
    agents.push_back(std::move(a));
  }
  auto members = common::ReadMemberFile(ring_file);
  if (!members.ok()) {
    std::cerr << "ring_fleet: " << members.status().message() << "\n";
    return 1;
  }
  for (auto& a : agents) {
    Agent* self = a.get();
    a->ring = std::make_unique<agent::CollectorRing>(
        agent::CollectorRingOptions{
            .spool = {.dir = spool_dir / a->name, .max_bytes = 64ull << 20, .fsync = false},
            .spool_per_member = true,
            .home_key = a->name},
        [](const std::string& address) -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
          return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
        },
        [self](const agent::Spool& spool) {
          v1::AgentHello h;
          h.set_hostname(self->name);
          h.set_role(self->role);
          h.set_transport(v1::TRANSPORT_TCP);
          h.set_agent_version("ring_fleet");
          h.set_stream_epoch(spool.epoch());
          return h;
        },
        [self, session](const v1::CollectorMessage& m) {
          if (m.has_start() && m.start().settings().session() == session) self->start = true;
        });
    if (auto st = a->ring->SetMembers(*members); !st.ok()) {
      std::cerr << "ring_fleet: " << st.message() << "\n";
      return 1;
    }
    a->ring->Start();
  }
  std::atomic<bool> stop_watch{false};
  std::thread ring_watch([&] {  // what ntprofd serve --ring-file does, faster
    std::vector<std::string> current = common::HashRing(*members).members();
    while (!stop_watch) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      auto now = common::ReadMemberFile(ring_file);
      if (!now.ok()) continue;
      const std::vector<std::string> wanted = common::HashRing(*now).members();
      for (auto& a : agents) {
        if (wanted != current) (void)a->ring->SetMembers(wanted);
        a->ring->Retire();
      }
      if (wanted != current) std::cout << "ring " << wanted.size() << std::endl;
      current = wanted;
    }
  });

  for (auto& a : agents) {
    while (!a->start) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& a : agents) {
    const v1::FileHeader header = HeaderOf(*a, session);
    a->file = std::move(*NtpWriter::Create((out_dir / (a->name + (a->role == v1::ROLE_HOST ? "-host.ntp" : "-target.ntp"))).string(), header));
    if (auto st = a->ring->AppendOpened(header); !st.ok()) {
      std::cerr << "ring_fleet: " << st.message() << "\n";
      return 1;
    }
  }
  std::cout << "recording" << std::endl;

  // One read per host and subsystem per interval; every stage a fixed duration.
  const int intervals = static_cast<int>(seconds * 1000 / kBatchEvery.count());
  uint64_t sent = 0;
  for (int i = 0; i < intervals; ++i) {
    std::map<Agent*, v1::RecordBatch> batches;
    for (int h = 0; h < hosts; ++h) {
      Agent* host = agents[h].get();
      for (int t = 0; t < targets; ++t) {
        Agent* target = agents[hosts + t].get();
        for (int s = 0; s < subsystems; ++s) {
          testing::CommandId id;
          id.nqn = Nqn(t, s);
          id.cntlid = static_cast<uint32_t>(h + 1);
          id.qid = 1;
          id.cid = static_cast<uint32_t>(i % 4096);
          id.slba = static_cast<uint64_t>(i) * 8;
          const uint64_t offset = static_cast<uint64_t>(i) * 100'000'000ull + s * 10'000ull;
          const uint64_t h0 = host->mono_start + 1000 + offset;
          const uint64_t t0 = target->mono_start + 1000 + offset + 3'000;
          *batches[host].add_records() = testing::MakeRecord(
              v1::ROLE_HOST, id, testing::HostStamps(h0, 1'000, 2'000, 200'000, 1'500, 500),
              "nvme0n1");
          *batches[target].add_records() = testing::MakeRecord(
              v1::ROLE_TARGET, id, testing::TargetStamps(t0, 2'000, 2'000, 150'000, 1'500, 1'500),
              "nullb0");
        }
      }
    }
    for (auto& [a, batch] : batches) {
      if (a->role == v1::ROLE_HOST) {
        v1::DeviceCounters* c = batch.add_counters();
        c->set_device("nvme0n1");
        c->set_reads(static_cast<uint64_t>(batch.records_size()));
        c->set_read_bytes(c->reads() * 4096);
        c->set_interval_start_ns(a->mono_start + static_cast<uint64_t>(i) * 100'000'000ull);
        c->set_interval_end_ns(a->mono_start + static_cast<uint64_t>(i + 1) * 100'000'000ull);
      }
      batch.mutable_losses();  // cumulative, none
      (void)a->file->WriteBatch(batch);
      sent += static_cast<uint64_t>(batch.records_size());
      const agent::WireBatch wire = agent::WireBatch::FromMessage(batch);
      if (auto st = a->ring->AppendBatch(session, agent::BatchShare(wire, wire.extras()));
          !st.ok()) {
        std::cerr << "ring_fleet: " << st.message() << "\n";
        return 1;
      }
    }
    std::this_thread::sleep_for(kBatchEvery);
  }
  for (auto& a : agents) {
    v1::FileTrailer trailer;
    trailer.set_end_wall_ns(kWallStart + static_cast<uint64_t>(intervals) * 100'000'000ull);
    trailer.set_end_mono_ns(a->mono_start + static_cast<uint64_t>(intervals) * 100'000'000ull);
    (void)a->file->Finalize(trailer);
    if (auto st = a->ring->AppendClosed(session, &trailer, ""); !st.ok()) {
      std::cerr << "ring_fleet: " << st.message() << "\n";
      return 1;
    }
  }
  std::cout << "closed" << std::endl;
  // Every collector acked everything: the spools are empty.
  while (true) {
    uint64_t unacked = 0;
    for (auto& a : agents) unacked += a->ring->Stats().unacked_messages;
    if (unacked == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::cout << "sent " << sent << std::endl;
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

int Owners(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: ring_fleet owners MEMBERS COLLECTOR FILE...\n";
    return 2;
  }
  const common::HashRing ring(common::SplitMemberList({argv[2]}));
  const std::string collector = argv[3];
  uint64_t records = 0;
  std::set<std::string> nqns;
  for (int i = 4; i < argc; ++i) {
    auto reader = NtpReader::Open(argv[i], NtpReadOptions{.salvage = true});
    if (!reader.ok()) {
      std::cerr << "ring_fleet: " << reader.status().message() << "\n";
      return 1;
    }
    v1::RecordBatch batch;
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok() || !*more) break;
      for (const v1::Record& r : batch.records()) {
        if (ring.Owner(r.subsys_nqn()) != collector) {
          std::cerr << argv[i] << ": " << r.subsys_nqn() << " belongs to "
                    << ring.Owner(r.subsys_nqn()) << ", not " << collector << "\n";
          return 1;
        }
        ++records;
        nqns.insert(r.subsys_nqn());
      }
    }
  }
  std::cout << "owned " << records << " subsystems " << nqns.size() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "stream") return Stream(argc, argv);
  if (verb == "owners") return Owners(argc, argv);
  std::cerr << "usage: ring_fleet stream ... | ring_fleet owners ...\n";
  return 2;
}
