// The stored records of one session on the collector's disk: one .ntp file per agent, the same
// format `ntprofd record` writes, so Report and Export are the file tools run on these files.
//
// Every message of the agent stream that carries a sequence number ends up in exactly one frame
// written with one write(2): a batch as itself, SessionOpened / SessionClosed as an empty batch
// carrying the number. After a crash, scanning the files therefore tells exactly which numbers are
// held (nothing acked is lost, nothing is held twice). A restarted collector appends to a new
// segment file: <hostname>-<role>-<epoch>-<segment>.ntp.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent_key.h"
#include "ntp_writer.h"

namespace ntprof::collector {

struct StoredFile {
  std::string path;
  AgentKey agent;
  v1::Role role = v1::ROLE_UNKNOWN;
  int segment = 0;
  // Found open (no trailer) when the collector started: the collector stopped (killed, crashed,
  // restarted) while the agent was still recording into it.
  bool open_when_collector_stopped = false;
};

class SessionFiles {
 public:
  explicit SessionFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Reads what an earlier run of the collector stored in dir: the files, and per agent the
  // sequence numbers they hold (into *held).
  absl::Status Recover(std::map<AgentKey, std::set<uint64_t>>* held);

  absl::Status Open(const AgentKey& agent, const v1::FileHeader& header, uint64_t seq);
  // The agent must have opened the session (now or before a restart).
  absl::Status Append(const AgentKey& agent, const v1::RecordBatch& batch);
  absl::Status Close(const AgentKey& agent, const v1::FileTrailer& trailer, uint64_t seq);

  bool HasHeader(const AgentKey& agent) const { return headers_.count(agent) != 0; }
  // Records and batches stored from one agent (every epoch), markers left out.
  struct Totals {
    uint64_t records = 0;
    uint64_t batches = 0;
  };
  Totals TotalsOf(const std::string& hostname) const;
  std::vector<StoredFile> Files() const;
  // An agent's wall clock minus its monotonic clock, from its latest file header (0: no file yet).
  // Safe from any thread: the join threads ask it while agents' streams open files.
  int64_t WallMinusMono(const std::string& hostname) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  absl::StatusOr<NtpWriter*> WriterFor(const AgentKey& agent);
  absl::Status StartSegment(const AgentKey& agent);
  void SetHeader(const AgentKey& agent, const v1::FileHeader& header);

  std::filesystem::path dir_;
  std::map<AgentKey, v1::FileHeader> headers_;
  std::map<AgentKey, int> next_segment_;
  std::map<AgentKey, std::unique_ptr<NtpWriter>> writers_;  // open files (not yet closed)
  std::vector<StoredFile> files_;
  std::map<std::string, Totals> totals_;  // by hostname
  mutable std::mutex clocks_mu_;
  // By hostname: (epoch of the header, its wall minus mono); the latest epoch wins.
  std::map<std::string, std::pair<uint64_t, int64_t>> wall_minus_mono_;
};

// "<hostname>-<role>.ntp", or "<hostname>-<role>-<segment>.ntp" beyond the first segment: the
// names Export gives the files.
std::string ExportName(const StoredFile& file);

}  // namespace ntprof::collector
