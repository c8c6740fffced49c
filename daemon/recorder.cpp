#include "recorder.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "host_identity.h"
#include "monotonic_clock.h"
#include "nvmet_backends.h"
#include "transports.h"

namespace ntprof::agent {
namespace {

// How long a stop waits for the sampled commands in flight (QD1 under emulation: tens of ms; a
// command that never completes, a lost controller, holds it this long).
constexpr int kStopWaitMs = 1000;

// The target's T2 hook that only some disks need (hook_catalog.cpp, nvmet_backends.h).
constexpr const char* kBioQueueHook = "block_bio_queue";

}  // namespace

Recorder::Recorder(RecordingOptions options, std::unique_ptr<AgentEngine> engine)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      agent_(Hostname()),
      identity_(options_.session, engine_.get(), agent_) {}

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(const RecordingOptions& options,
                                                          const KernelFacts& facts,
                                                          LogCallback log) {
  const SessionOptions& s = options.session;
  if (std::string problem = CheckTransportArguments(s.role, s.transport, s.device, true);
      !problem.empty())
    return absl::InvalidArgumentError(problem);
  const TransportRow& row = *FindTransport(s.transport);
  auto engine = AgentEngine::Start(s, facts, std::move(log));
  if (!engine.ok()) return engine.status();
  std::unique_ptr<Recorder> r(new Recorder(options, std::move(*engine)));

  // listening before the first read, so no change between the two goes unseen
  if (auto events = DeviceEvents::Open(); events.ok()) r->device_events_.emplace(std::move(*events));
  r->identity_.Refresh();  // before the watch, which reads the host's NVMe view it holds
  auto present = r->UpdateWatchedDevices();
  if (!present.ok()) return present.status();
  if (!*present) {
    return absl::NotFoundError(row.local_device ? "no block device " + s.device
                                                : std::string("no ") + row.display_name +
                                                      " namespace " + s.device +
                                                      " on this host (see `nvme list`)");
  }
  r->UpdateBackendHooks();

  v1::FileHeader& h = r->header_;
  h.set_hostname(r->agent_);
  h.set_kernel_release(KernelRelease());
  h.set_boot_id(BootId());
  h.set_role(ToProto(s.role));
  h.set_transport(s.transport);
  h.set_stack(v1::STACK_KERNEL);
  h.set_sample_rate(s.sample_rate);
  h.set_salt(s.salt);
  h.set_start_wall_ns(ClockNs(CLOCK_REALTIME));
  h.set_start_mono_ns(ClockNs(CLOCK_MONOTONIC));
  h.set_agent_version(NTPROF_VERSION);
  h.set_session(options.session_name);
  for (const std::string& m : r->plan().MissingOptional()) h.add_hooks_missing(m);
  return r;
}

absl::StatusOr<bool> Recorder::UpdateWatchedDevices() {
  const SessionOptions& s = options_.session;
  WatchedDevices w = FindTransport(s.transport)->watch(s.role, s.device, identity_.host_view());
  if (absl::Status st = engine_->SetWatchedDevices(w.devices); !st.ok()) return st;
  counters_.Watch(w.devices);
  return w.present;
}

void Recorder::UpdateBackendHooks() {
  backends_stale_ = false;
  if (options_.session.role != Role::kTarget) return;
  const bool loaded = std::any_of(plan().hooks().begin(), plan().hooks().end(), [](const auto& d) {
    return d.hook.name == kBioQueueHook && d.chosen_variant();
  });
  if (!loaded) return;  // the plan says why (probe); T2 from requests only
  const std::vector<std::string> reasons = ReadNvmetBackends().BioQueueReasons();
  absl::StatusOr<bool> changed = engine_->SetOnDemandHook(kBioQueueHook, !reasons.empty());
  std::string note;
  if (!changed.ok()) {
    // The recording goes on: those namespaces' records come without T2, counted as incomplete.
    note = std::string(changed.status().message()) + "; T2 missing for " + absl::StrJoin(reasons, "; ");
  } else if (*changed) {
    note = reasons.empty() ? std::string(kBioQueueHook) +
                                 " detached: every enabled namespace's disk stamps its requests "
                                 "(T2 read at block_rq_issue)"
                           : std::string(kBioQueueHook) + " attached for T2: " +
                                 absl::StrJoin(reasons, "; ");
  }
  // a failure repeats at every look: said once
  if (!note.empty() && note != last_backend_note_ && options_.on_note) options_.on_note(note);
  if (!note.empty()) last_backend_note_ = note;
}

void Recorder::AddIntervalCounters(v1::RecordBatch& batch, uint64_t start_ns, uint64_t now_ns) {
  // What completed since the last interval, per device name (the paths of a multipath namespace
  // add up), in name order. Built in the batch itself: a map of counters on the heap, copied in
  // afterwards, was a third of an idle interval's work.
  auto& counters = *batch.mutable_counters();
  const int first = counters.size();
  for (const auto& [dev, c] : counters_.Read()) {
    std::string name = identity_.DeviceName(dev);
    v1::DeviceCounters* out = nullptr;
    for (int i = first; i < counters.size() && !out; ++i) {
      if (counters.Get(i).device() == name) out = counters.Mutable(i);
    }
    if (!out) {
      out = counters.Add();
      out->set_device(std::move(name));
      out->set_interval_start_ns(start_ns);
      out->set_interval_end_ns(now_ns);
    }
    out->set_reads(out->reads() + c.reads);
    out->set_writes(out->writes() + c.writes);
    out->set_read_bytes(out->read_bytes() + c.read_bytes);
    out->set_write_bytes(out->write_bytes() + c.write_bytes);
  }
  std::sort(counters.pointer_begin() + first, counters.pointer_end(),
            [](const v1::DeviceCounters* a, const v1::DeviceCounters* b) {
              return a->device() < b->device();
            });
}

void Recorder::FillLosses(v1::LossCounters* l) const {
  KernelLosses k = engine_->ReadCountedLosses();
  l->set_ring_buffer_full(k.ring_buffer_full);
  l->set_inflight_table_full(k.inflight_table_full);
  l->set_evicted_incomplete(evicted_);
  l->set_missing_stamp(missing_stamp_);
  l->set_nested_probe_miss(nested_probe_miss_);
  l->set_completion_missed(k.completion_missed);
  l->set_unfinished_at_stop(unfinished_at_stop_);
  l->set_socket_table_full(k.socket_table_full);
}

RecordCallback Recorder::AddTo(WireBatch& batch) {
  return [this, &batch](const ntprof_record& rec) {
    if (MissesCoreStamp(rec)) ++missing_stamp_;
    if (rec.role == NTPROF_ROLE_TARGET && !rec.stamps[NTPROF_T2_BACKEND_SUBMIT] &&
        IsReadOrWrite(rec.opcode) && !engine_->OnDemandHookAttached(kBioQueueHook))
      backends_stale_ = true;
    batch.Add(rec, identity_.Resolve(rec));
    ++records_;
  };
}

absl::StatusOr<int> Recorder::Poll(int max_wait_ms, WireBatch& batch) {
  return engine_->Poll(max_wait_ms, AddTo(batch));
}

absl::StatusOr<std::optional<std::string>> Recorder::EndInterval(uint64_t now_ns) {
  absl::StatusOr<bool> present = true;
  if (!device_events_ || device_events_->Drain() || now_ns >= next_rescan_ns_) {
    identity_.Refresh();
    present = UpdateWatchedDevices();
    UpdateBackendHooks();
    next_rescan_ns_ = now_ns + kRescanEveryNs;
  } else if (backends_stale_) {
    UpdateBackendHooks();
  }
  if (now_ns >= next_nested_read_ns_) {
    nested_probe_miss_ = engine_->ReadNestedProbeMisses();
    next_nested_read_ns_ = now_ns + kNestedMissEveryNs;
  }
  if (now_ns >= next_sweep_ns_) {
    evicted_ += engine_->SweepInflight(now_ns - kEvictAfterNs, [](const ntprof_record&) {});
    next_sweep_ns_ = now_ns + kSweepEveryNs;
  }
  if (!present.ok()) return present.status();
  if (!*present) return "device " + options_.session.device + " disappeared";
  return std::nullopt;
}

// Sample nothing new and let the sampled commands in flight finish with every hook attached (up to
// kStopWaitMs), then stop the hooks, drain what they produced, count the sampled commands still in
// flight (each runs past the stop, or is one whose completion the kernel never reported).
void Recorder::Stop(bool drain, WireBatch& batch) {
  if (!drain) {
    nested_probe_miss_ = engine_->ReadNestedProbeMisses();  // exact in the trailer
    return;
  }
  engine_->StopSampling(kStopWaitMs);
  engine_->DetachHooks();
  const RecordCallback on_record = AddTo(batch);
  while (true) {
    auto polled = engine_->Poll(0, on_record);
    if (!polled.ok() || *polled == 0) break;
  }
  unfinished_at_stop_ = engine_->SweepInflight(UINT64_MAX, [](const ntprof_record&) {});
  nested_probe_miss_ = engine_->ReadNestedProbeMisses();  // exact in the last batch and the trailer
}

absl::Status Recorder::Run(BatchSink& sink, const std::atomic<bool>& stop,
                           const IntervalCallback& on_interval) {
  return RunRecording(*this,
                      {.interval_s = options_.interval_s,
                       .duration_s = options_.duration_s},
                      sink, stop, on_interval, &stop_reason_);
}

}  // namespace ntprof::agent
