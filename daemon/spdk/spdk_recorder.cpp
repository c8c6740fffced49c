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

constexpr int kPollMs = 50;
constexpr int kMaxBatchRecords = 8192;
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

void SpdkRecorder::OnEvent(const ntprof_spdk_event& e) {
  auto rec = ConvertSpdkEvent(e);
  if (!rec.ok()) {
    ++unusable_;
    if (unusable_ == 1) Log(std::string(rec.status().message()));
    return;
  }
  if (SpdkRecordMissesStamp(*rec)) ++missing_stamp_;
  auto t = processes_.find(static_cast<pid_t>(e.pid));
  const std::string comm = t != processes_.end() ? t->second.comm : absl::StrCat("pid", e.pid);
  ConvertRecord(*rec, SpdkIdentity(e, comm), agent_, batch_.batch().add_records());
}

v1::LossCounters SpdkRecorder::Losses() const {
  v1::LossCounters l;
  l.set_ring_buffer_full(probes_->ring_buffer_full());
  l.set_missing_stamp(missing_stamp_ + unusable_);
  return l;
}

absl::Status SpdkRecorder::FlushBatch(BatchSink& sink, const IntervalCallback& on_interval,
                                      bool interval_end) {
  const uint64_t now = ClockNs(CLOCK_MONOTONIC);
  *batch_.batch().mutable_losses() = Losses();
  return batch_.Flush(sink, on_interval, interval_end, now);
}

absl::Status SpdkRecorder::Run(BatchSink& sink, const std::atomic<bool>& stop,
                               const IntervalCallback& on_interval) {
  const uint64_t start = ClockNs(CLOCK_MONOTONIC);
  const uint64_t interval_ns = static_cast<uint64_t>(options_.interval_s * 1e9);
  const uint64_t rescan_ns = static_cast<uint64_t>(options_.rescan_s * 1e9);
  const uint64_t end = options_.duration_s > 0 ? start + static_cast<uint64_t>(options_.duration_s * 1e9)
                                               : UINT64_MAX;
  const bool only_pids = std::all_of(finder_->specs().begin(), finder_->specs().end(),
                                     [](const SpdkTargetSpec& s) { return s.pid.has_value(); });
  batch_.Begin(start);
  uint64_t next_interval = start + interval_ns, next_rescan = start + rescan_ns;
  const SpdkUsdtProbes::EventCallback on_event = [this](const ntprof_spdk_event& e) { OnEvent(e); };
  absl::Status failure;

  stop_reason_ = "stopped by signal";
  while (!stop.load()) {
    auto polled = probes_->Poll(kPollMs, on_event);
    if (!polled.ok()) {
      failure = polled.status();
      break;
    }
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (now >= next_rescan) {
      next_rescan = now + rescan_ns;
      Rescan();
      if (only_pids && processes_.empty()) {
        stop_reason_ = "every process given by PID exited";
        break;
      }
    }
    if (now >= next_interval) {
      next_interval += interval_ns * ((now - next_interval) / interval_ns + 1);
      if (absl::Status st = FlushBatch(sink, on_interval, true); !st.ok()) {
        failure = st;
        break;
      }
    } else if (batch_.batch().records_size() >= kMaxBatchRecords) {
      if (absl::Status st = FlushBatch(sink, on_interval, false); !st.ok()) {
        failure = st;
        break;
      }
    }
    if (now >= end) {
      stop_reason_ = "duration elapsed";
      break;
    }
  }
  // Sampling off first; commands already sampled still fire their probe: collect them, then stop.
  for (auto& [pid, t] : processes_) StopSampling(pid, t);
  if (failure.ok()) {
    for (int i = 0; i < 3; ++i) {
      auto polled = probes_->Poll(i == 0 ? kPollMs : 0, on_event);
      if (!polled.ok() || (*polled == 0 && i > 0)) break;
    }
    failure = FlushBatch(sink, on_interval, true);
  }
  v1::FileTrailer trailer;
  trailer.set_end_wall_ns(ClockNs(CLOCK_REALTIME));
  trailer.set_end_mono_ns(ClockNs(CLOCK_MONOTONIC));
  *trailer.mutable_losses() = Losses();
  absl::Status fin = sink.Finalize(trailer);
  if (!failure.ok()) return failure;
  return fin;
}

}  // namespace ntprof::agent::spdk
