#include "recorder.h"

#include "block_devices.h"
#include "host_identity.h"
#include "monotonic_clock.h"
#include "nvme_sysfs.h"

namespace ntprof::agent {
namespace {

constexpr uint16_t kDefaultNvmeTcpPort = 4420;
constexpr int kPollMs = 100;
constexpr int kMaxBatchRecords = 8192;  // a busy interval is cut into several batches

v1::Transport ToProto(Transport t) {
  switch (t) {
    case Transport::kTcp:
      return v1::TRANSPORT_TCP;
    case Transport::kRdma:
      return v1::TRANSPORT_RDMA;
    case Transport::kLocal:
      return v1::TRANSPORT_LOCAL;
  }
  return v1::TRANSPORT_UNKNOWN;
}

}  // namespace

Recorder::Recorder(RecordingOptions options, std::unique_ptr<AgentEngine> engine)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      identity_(options_.session, engine_.get()),
      agent_(Hostname()) {}

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(const RecordingOptions& options,
                                                          const KernelFacts& facts,
                                                          LogCallback log) {
  const SessionOptions& s = options.session;
  if (s.transport == Transport::kLocal && s.device.empty())
    return absl::InvalidArgumentError("--transport local needs --device (e.g. --device loop0)");
  auto engine = AgentEngine::Start(s, facts, std::move(log));
  if (!engine.ok()) return engine.status();
  std::unique_ptr<Recorder> r(new Recorder(options, std::move(*engine)));

  auto present = r->UpdateWatchedDevices();
  if (!present.ok()) return present.status();
  if (!*present) {
    return absl::NotFoundError(
        s.transport == Transport::kLocal
            ? "no block device " + s.device
            : std::string("no NVMe/") + (s.transport == Transport::kRdma ? "RDMA" : "TCP") +
                  " namespace " + s.device + " on this host (see `nvme list`)");
  }
  r->identity_.Refresh();

  v1::FileHeader& h = r->header_;
  h.set_hostname(r->agent_);
  h.set_kernel_release(KernelRelease());
  h.set_boot_id(BootId());
  h.set_role(s.role == Role::kHost ? v1::ROLE_HOST : v1::ROLE_TARGET);
  h.set_transport(ToProto(s.transport));
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
  std::vector<uint32_t> devs;
  std::vector<uint16_t> ports;
  bool present = true;
  if (s.transport == Transport::kLocal) {
    auto dev = ResolveBlockDevice(s.device);
    present = dev.ok();
    if (present) devs.push_back(*dev);
  } else if (s.role == Role::kHost) {
    NvmeHostView view = ReadNvmeHostView();
    devs = view.DevicesOn(TransportName(s.transport), s.device);
    if (s.transport == Transport::kTcp) ports = view.PortsOn("tcp");
    present = s.device.empty() || !devs.empty();
  } else if (s.transport == Transport::kTcp) {
    ports = ReadNvmetTcpPorts();
  }
  if (s.transport == Transport::kTcp && ports.empty()) ports.push_back(kDefaultNvmeTcpPort);
  if (absl::Status st = engine_->SetWatchedDevices(devs); !st.ok()) return st;
  counters_.Watch(devs);
  if (s.transport == Transport::kTcp) {
    if (absl::Status st = engine_->SetTcpPorts(ports); !st.ok()) return st;
  }
  return present;
}

absl::Status Recorder::FlushBatch(BatchSink& sink, const IntervalCallback& on_interval,
                                  bool interval_end) {
  uint64_t now = ClockNs(CLOCK_MONOTONIC);
  if (interval_end) {
    // Device counters: what completed since the last interval, per device name (the paths of a
    // multipath namespace add up).
    std::map<std::string, v1::DeviceCounters> by_name;
    for (const auto& [dev, c] : counters_.Read()) {
      v1::DeviceCounters& out = by_name[identity_.DeviceName(dev)];
      out.set_device(identity_.DeviceName(dev));
      out.set_reads(out.reads() + c.reads);
      out.set_writes(out.writes() + c.writes);
      out.set_read_bytes(out.read_bytes() + c.read_bytes);
      out.set_write_bytes(out.write_bytes() + c.write_bytes);
      out.set_interval_start_ns(batch_.interval_start_ns());
      out.set_interval_end_ns(now);
    }
    for (auto& [name, c] : by_name) *batch_.batch().add_counters() = c;
  }
  FillLosses(batch_.batch().mutable_losses());
  return batch_.Flush(sink, on_interval, interval_end, now);
}

void Recorder::FillLosses(v1::LossCounters* l) const {
  KernelLosses k = engine_->ReadLosses();
  l->set_ring_buffer_full(k.ring_buffer_full);
  l->set_inflight_table_full(k.inflight_table_full);
  l->set_evicted_incomplete(evicted_);
  l->set_missing_stamp(missing_stamp_);
  l->set_nested_probe_miss(k.nested_probe_miss);
  l->set_completion_missed(k.completion_missed);
  l->set_unfinished_at_stop(unfinished_at_stop_);
}

absl::Status Recorder::Run(BatchSink& sink, const std::atomic<bool>& stop,
                           const IntervalCallback& on_interval) {
  const uint64_t start = ClockNs(CLOCK_MONOTONIC);
  const uint64_t interval_ns = static_cast<uint64_t>(options_.interval_s * 1e9);
  const uint64_t end = options_.duration_s > 0
                           ? start + static_cast<uint64_t>(options_.duration_s * 1e9)
                           : UINT64_MAX;
  batch_.Begin(start);
  uint64_t next_interval = start + interval_ns;
  absl::Status failure;

  RecordCallback on_record = [&](const ntprof_record& rec) {
    if (MissesCoreStamp(rec)) ++missing_stamp_;
    ConvertRecord(rec, identity_.Resolve(rec), agent_, batch_.batch().add_records());
    ++records_;
  };

  stop_reason_ = "stopped by signal";
  while (!stop.load()) {
    auto polled = engine_->Poll(kPollMs, on_record);
    if (!polled.ok()) {
      failure = polled.status();
      break;
    }
    uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (now >= next_interval) {
      next_interval += interval_ns * ((now - next_interval) / interval_ns + 1);
      identity_.Refresh();
      auto present = UpdateWatchedDevices();
      evicted_ += engine_->SweepInflight(now - kEvictAfterNs, [](const ntprof_record&) {});
      if (absl::Status st = FlushBatch(sink, on_interval, true); !st.ok()) {
        failure = st;
        break;
      }
      if (!present.ok()) {
        failure = present.status();
        break;
      }
      if (!*present) {
        stop_reason_ = "device " + options_.session.device + " disappeared";
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
  // Stop the hooks, drain what they produced, count the sampled commands still in flight (each
  // runs past the stop, or is one whose completion the kernel never reported), then write the
  // last (partial) interval and the trailer.
  if (failure.ok()) {
    engine_->DetachHooks();
    while (true) {
      auto polled = engine_->Poll(0, on_record);
      if (!polled.ok() || *polled == 0) break;
    }
    unfinished_at_stop_ = engine_->SweepInflight(UINT64_MAX, [](const ntprof_record&) {});
    failure = FlushBatch(sink, on_interval, true);
  }
  v1::FileTrailer trailer;
  trailer.set_end_wall_ns(ClockNs(CLOCK_REALTIME));
  trailer.set_end_mono_ns(ClockNs(CLOCK_MONOTONIC));
  FillLosses(trailer.mutable_losses());
  absl::Status fin = sink.Finalize(trailer);
  if (!failure.ok()) return failure;
  return fin;
}

}  // namespace ntprof::agent
