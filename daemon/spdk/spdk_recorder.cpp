#include "spdk_recorder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "host_identity.h"
#include "monotonic_clock.h"
#include "record_converter.h"
#include "spdk_event_converter.h"

namespace ntprof::agent::spdk {
namespace {

constexpr uint64_t kAttachGraceNs = 5'000'000'000ull;

}  // namespace

SpdkRecorder::SpdkRecorder(SpdkRecordingOptions options, LogCallback log)
    : options_(std::move(options)), log_(std::move(log)), agent_(Hostname()) {}

absl::StatusOr<std::unique_ptr<SpdkRecorder>> SpdkRecorder::Start(
    const SpdkRecordingOptions& options, LogCallback log) {
  if (options.targets.empty())
    return absl::InvalidArgumentError(absl::StrCat(SpdkRoleFlag(options.role), " needs a BINARY or a PID"));
  std::unique_ptr<SpdkRecorder> r(new SpdkRecorder(options, std::move(log)));
  auto finder = SpdkProcessFinder::Create(options.role, options.targets);
  if (!finder.ok()) return finder.status();
  r->finder_ = std::move(*finder);
  auto probes = SpdkUsdtProbes::Load();
  if (!probes.ok()) return probes.status();
  r->probes_ = std::move(*probes);

  // Processes given by PID must be attachable now; a BINARY may have none running yet.
  for (const SpdkTargetSpec& s : r->finder_->specs()) {
    if (!s.unresolved_libraries.empty()) r->Log(UnresolvedLibrariesNote(s));
    if (!s.pid) continue;
    if (absl::Status st = r->Track(*s.pid); !st.ok()) return st;
  }
  r->Rescan();

  v1::FileHeader& h = r->header_;
  h.set_hostname(r->agent_);
  h.set_kernel_release(KernelRelease());
  h.set_boot_id(BootId());
  h.set_role(options.role == SpdkRole::kTarget ? v1::ROLE_TARGET : v1::ROLE_HOST);
  h.set_transport(options.transport);
  h.set_stack(v1::STACK_SPDK);
  h.set_sample_rate(options.sample_rate);
  h.set_salt(options.salt);
  h.set_start_wall_ns(ClockNs(CLOCK_REALTIME));
  h.set_start_mono_ns(ClockNs(CLOCK_MONOTONIC));
  h.set_agent_version(NTPROF_VERSION);
  h.set_session(options.session_name);
  return r;
}

SpdkRecorder::~SpdkRecorder() {
  for (auto& [pid, t] : processes_) StopSampling(pid, t);
}

absl::Status SpdkRecorder::Track(pid_t pid) {
  auto process = finder_->Inspect(pid);
  if (!process.ok()) return process.status();
  std::vector<const ElfProbeFile*> objects;
  for (const auto& o : process->objects) objects.push_back(o.elf);
  std::vector<std::string> problems;
  std::vector<ControlBlock> controls = LocateControlBlocks(process->info, objects, &problems);
  for (const ControlBlock& c : controls) {
    if (auto read = ReadControl(pid, c); !read.ok()) return read.status();
  }
  if (controls.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "process ", pid, " (", process->info.comm, "): cannot find where to write the sample rate: ",
        absl::StrJoin(problems, "; ")));
  }
  // Attach first, then switch sampling on: no sampled command fires into an empty probe.
  auto attached = probes_->Attach(*process, options_.role);
  if (!attached.ok()) return attached.status();
  for (const ControlBlock& c : controls) {
    if (absl::Status st = WriteSampling(pid, c, options_.sample_rate, options_.salt); !st.ok()) {
      probes_->Detach(pid);
      return st;
    }
  }
  Log(absl::StrCat("attached to process ", pid, " (", process->info.comm, "): ",
                   absl::StrJoin(*attached, ", "), "; sampling 1 in ", options_.sample_rate));
  for (const std::string& p : problems) Log(absl::StrCat("  note: ", p));
  processes_[pid] = Tracked{process->info.start_time, process->info.comm, std::move(controls)};
  return absl::OkStatus();
}

void SpdkRecorder::StopSampling(pid_t pid, Tracked& t) {
  if (!ProcessAlive(pid, t.start_time)) return;
  for (const ControlBlock& c : t.controls) {
    if (absl::Status st = WriteSampling(pid, c, 0, 0); !st.ok())
      Log(absl::StrCat("could not switch sampling off in process ", pid, ": ", st.message()));
  }
}

void SpdkRecorder::Rescan() {
  // Exited processes: detach (their links would otherwise keep the uprobes alive).
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (ProcessAlive(it->first, it->second.start_time)) {
      ++it;
      continue;
    }
    Log(absl::StrCat("process ", it->first, " (", it->second.comm, ") exited; detached"));
    probes_->Detach(it->first);
    exited_[it->first] = it->second.start_time;
    it = processes_.erase(it);
  }
  std::map<pid_t, uint64_t> skip = rejected_;
  for (const auto& [pid, t] : processes_) skip[pid] = t.start_time;
  for (const auto& [pid, start] : exited_) skip[pid] = start;
  const uint64_t now = ClockNs(CLOCK_MONOTONIC);
  for (pid_t pid : finder_->MatchingPids(skip)) {
    absl::Status st = Track(pid);
    auto first = first_seen_ns_.emplace(pid, now).first;
    if (st.ok()) {
      first_seen_ns_.erase(first);
      continue;
    }
    // A process found while it still loads its libraries (or before ntprof_probe_init) gets a
    // few seconds before it is skipped for good.
    auto info = ReadProcess(pid);
    if (info.ok() && now - first->second < kAttachGraceNs) continue;
    if (info.ok()) rejected_[pid] = info->start_time;
    first_seen_ns_.erase(first);
    Log(absl::StrCat("skipping process ", pid, ": ", st.message()));
  }
}

void SpdkRecorder::OnEvent(const ntprof_spdk_event& e, WireBatch& batch) {
  auto rec = ConvertSpdkEvent(e);
  if (!rec.ok()) {
    ++unusable_;
    if (unusable_ == 1) Log(std::string(rec.status().message()));
    return;
  }
  if (SpdkRecordMissesStamp(*rec)) ++missing_stamp_;
  auto t = processes_.find(static_cast<pid_t>(e.pid));
  const std::string comm = t != processes_.end() ? t->second.comm : absl::StrCat("pid", e.pid);
  RecordIdentity id = SpdkIdentity(e, comm);
  // Events of one process and subsystem follow each other: encode an identity when it changes.
  if (!last_identity_ || !(last_identity_->identity == id))
    last_identity_ = EncodeIdentity(id, agent_);
  batch.Add(*rec, last_identity_);
}

void SpdkRecorder::FillLosses(v1::LossCounters* l) const {
  l->Clear();
  l->set_ring_buffer_full(probes_->ring_buffer_full());
  l->set_missing_stamp(missing_stamp_ + unusable_);
}

absl::StatusOr<int> SpdkRecorder::PollProbes(int timeout_ms, WireBatch& batch) {
  return probes_->Poll(timeout_ms, [&](const ntprof_spdk_event& e) { OnEvent(e, batch); });
}

std::optional<std::string> SpdkRecorder::AfterPoll(uint64_t now_ns) {
  if (now_ns < next_rescan_ns_) return std::nullopt;
  next_rescan_ns_ = now_ns + static_cast<uint64_t>(options_.rescan_s * 1e9);
  Rescan();
  if (only_pids_ && processes_.empty()) return "every process given by PID exited";
  return std::nullopt;
}

// Sampling off first; commands already sampled still fire their probe: collect them.
void SpdkRecorder::Stop(bool drain, WireBatch& batch) {
  for (auto& [pid, t] : processes_) StopSampling(pid, t);
  if (!drain) return;
  for (int i = 0; i < 3; ++i) {
    auto polled = PollProbes(i == 0 ? kPollMs : 0, batch);
    if (!polled.ok() || (*polled == 0 && i > 0)) break;
  }
}

absl::Status SpdkRecorder::Run(BatchSink& sink, const std::atomic<bool>& stop,
                               const IntervalCallback& on_interval) {
  only_pids_ = std::all_of(finder_->specs().begin(), finder_->specs().end(),
                           [](const SpdkTargetSpec& s) { return s.pid.has_value(); });
  next_rescan_ns_ = ClockNs(CLOCK_MONOTONIC) + static_cast<uint64_t>(options_.rescan_s * 1e9);
  return RunRecording(*this,
                      {.interval_s = options_.interval_s,
                       .duration_s = options_.duration_s},
                      sink, stop, on_interval, &stop_reason_);
}

}  // namespace ntprof::agent::spdk
