#include "session_files.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ntp_reader.h"

namespace ntprof::collector {
namespace {

bool InPathOrder(const StoredFile& a, const StoredFile& b) { return a.path < b.path; }

std::string RoleName(v1::Role role) { return role == v1::ROLE_HOST ? "host" : "target"; }

std::string FileName(const AgentKey& agent, v1::Role role, int segment) {
  return absl::StrFormat("%s-%s-%016x-%d.ntp", agent.hostname, RoleName(role), agent.epoch,
                         segment);
}

// Inverse of FileName; the hostname may itself contain '-'.
bool ParseFileName(const std::string& name, AgentKey* agent, v1::Role* role, int* segment) {
  if (name.size() < 5 || name.substr(name.size() - 4) != ".ntp") return false;
  std::string stem = name.substr(0, name.size() - 4);
  std::vector<std::string> parts;
  for (int i = 0; i < 3; ++i) {
    const size_t dash = stem.rfind('-');
    if (dash == std::string::npos) return false;
    parts.push_back(stem.substr(dash + 1));
    stem.resize(dash);
  }
  if (!absl::SimpleAtoi(parts[0], segment)) return false;
  if (!absl::SimpleHexAtoi(parts[1], &agent->epoch)) return false;
  if (parts[2] != "host" && parts[2] != "target") return false;
  *role = parts[2] == "host" ? v1::ROLE_HOST : v1::ROLE_TARGET;
  agent->hostname = stem;
  return !stem.empty();
}

v1::RecordBatch SequenceMarker(uint64_t seq) {
  v1::RecordBatch marker;
  marker.set_seq(seq);
  return marker;
}

void Count(const v1::RecordBatch& batch, SessionFiles::Totals* totals) {
  if (batch.records_size() == 0 && batch.counters_size() == 0) return;  // a sequence marker
  totals->records += static_cast<uint64_t>(batch.records_size());
  ++totals->batches;
}

}  // namespace

SessionFiles::Totals SessionFiles::TotalsOf(const std::string& hostname) const {
  auto it = totals_.find(hostname);
  return it == totals_.end() ? Totals{} : it->second;
}

int64_t SessionFiles::WallMinusMono(const std::string& hostname) const {
  std::lock_guard lock(clocks_mu_);
  auto it = wall_minus_mono_.find(hostname);
  return it == wall_minus_mono_.end() ? 0 : it->second.second;
}

void SessionFiles::SetHeader(const AgentKey& agent, const v1::FileHeader& header) {
  headers_[agent] = header;
  const int64_t clock =
      static_cast<int64_t>(header.start_wall_ns()) - static_cast<int64_t>(header.start_mono_ns());
  std::lock_guard lock(clocks_mu_);
  auto [it, added] = wall_minus_mono_.try_emplace(agent.hostname, agent.epoch, clock);
  if (!added && agent.epoch >= it->second.first) it->second = {agent.epoch, clock};
}

std::string ExportName(const StoredFile& file) {
  const std::string base = absl::StrCat(file.agent.hostname, "-", RoleName(file.role));
  return file.segment == 0 ? base + ".ntp" : absl::StrCat(base, "-", file.segment, ".ntp");
}

absl::Status SessionFiles::Recover(std::map<AgentKey, std::set<uint64_t>>* held) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    StoredFile file;
    if (!ParseFileName(entry.path().filename().string(), &file.agent, &file.role, &file.segment)) {
      continue;
    }
    file.path = entry.path().string();
    // A frame cut short by the crash was never acked: read the intact ones.
    auto reader = NtpReader::Open(file.path, NtpReadOptions{.salvage = true});
    if (!reader.ok()) {
      // Killed before the header was complete: nothing in it was acked.
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    v1::RecordBatch batch;
    std::set<uint64_t>& seqs = (*held)[file.agent];
    while (true) {
      auto more = (*reader)->Next(&batch);
      if (!more.ok() || !*more) break;
      seqs.insert(batch.seq());
      Count(batch, &totals_[file.agent.hostname]);
    }
    file.open_when_collector_stopped = !(*reader)->finalized();
    SetHeader(file.agent, (*reader)->header());
    next_segment_[file.agent] = std::max(next_segment_[file.agent], file.segment + 1);
    files_.push_back(file);
  }
  if (ec)
    return absl::UnavailableError(absl::StrCat(dir_.string(), ": cannot list: ", ec.message()));
  std::sort(files_.begin(), files_.end(), InPathOrder);
  return absl::OkStatus();
}

absl::Status SessionFiles::StartSegment(const AgentKey& agent) {
  const v1::FileHeader& header = headers_.at(agent);
  StoredFile file;
  file.agent = agent;
  file.role = header.role();
  file.segment = next_segment_[agent]++;
  file.path = (dir_ / FileName(agent, file.role, file.segment)).string();
  auto writer = NtpWriter::Create(file.path, header);
  if (!writer.ok()) return writer.status();
  writers_[agent] = std::move(*writer);
  // In path order, as Recover leaves them: an export lists the same files in the same order
  // whichever agent's first batch came first, and before or after a collector restart.
  files_.insert(std::upper_bound(files_.begin(), files_.end(), file, InPathOrder), file);
  return absl::OkStatus();
}

absl::Status SessionFiles::Open(const AgentKey& agent, const v1::FileHeader& header, uint64_t seq) {
  if (header.role() != v1::ROLE_HOST && header.role() != v1::ROLE_TARGET) {
    return absl::InvalidArgumentError("session header names no role (host or target)");
  }
  if (auto it = writers_.find(agent); it != writers_.end()) {
    // Opened again without a close (the agent restarted its recording): end the old file.
    (void)it->second->Finalize(v1::FileTrailer{});
    writers_.erase(it);
  }
  SetHeader(agent, header);
  if (auto st = StartSegment(agent); !st.ok()) return st;
  return writers_.at(agent)->WriteBatch(SequenceMarker(seq));
}

absl::StatusOr<NtpWriter*> SessionFiles::WriterFor(const AgentKey& agent) {
  if (auto it = writers_.find(agent); it != writers_.end()) return it->second.get();
  if (!HasHeader(agent)) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent ", agent.hostname, " sent records before SessionOpened"));
  }
  // Held before a collector restart (or closed and now sending late batches): a new segment.
  if (auto st = StartSegment(agent); !st.ok()) return st;
  return writers_.at(agent).get();
}

absl::Status SessionFiles::Append(const AgentKey& agent, const v1::RecordBatch& batch) {
  auto writer = WriterFor(agent);
  if (!writer.ok()) return writer.status();
  if (auto st = (*writer)->WriteBatch(batch); !st.ok()) return st;
  Count(batch, &totals_[agent.hostname]);
  return absl::OkStatus();
}

absl::Status SessionFiles::Close(const AgentKey& agent, const v1::FileTrailer& trailer,
                                 uint64_t seq) {
  auto writer = WriterFor(agent);
  if (!writer.ok()) return writer.status();
  if (auto st = (*writer)->WriteBatch(SequenceMarker(seq)); !st.ok()) return st;
  auto st = (*writer)->Finalize(trailer);
  writers_.erase(agent);
  return st;
}

std::vector<StoredFile> SessionFiles::Files() const { return files_; }

}  // namespace ntprof::collector
