// Writes synthetic host and target recordings (.ntp) for tests: the same command stream seen from
// both sides, with chosen stage durations.
#pragma once

#include <functional>
#include <string>

#include "ntp_writer.h"
#include "record_factory.h"

namespace ntprof::testing {

struct RunSpec {
  int commands = 100;
  uint32_t sample_rate = 10;
  uint64_t salt = 42;
  std::string session = "test";
  uint64_t wall_start_ns = 1'700'000'000'000'000'000ull;
  uint64_t host_mono_start = 1'000'000'000;     // the host's clock
  uint64_t target_mono_start = 900'000'000'000; // the target's clock, unrelated
  uint64_t span_ns = 1'000'000'000;             // trailer end - start
  uint64_t gap_ns = 1'000'000;                  // between command starts
  int batch = 16;
  // The host's batches also count every command they stand for (sample_rate per sampled read):
  // the device counters a report's throughput comes from.
  bool device_counters = false;
  // What the records say; the headers always say TCP (an SPDK recording's header names a default).
  v1::Transport record_transport = v1::TRANSPORT_TCP;
};

// Durations of one command's pieces: see HostStamps / TargetStamps.
struct CommandTiming {
  uint64_t block_submit, driver_submit, driver_complete, block_complete;
  uint64_t network;  // wire time, both directions together
  uint64_t receive, submit, storage, respond, send;
};

inline v1::FileHeader Header(const RunSpec& spec, v1::Role role) {
  v1::FileHeader h;
  h.set_hostname(role == v1::ROLE_HOST ? "host" : "target");
  h.set_kernel_release("6.1.0-test");
  h.set_boot_id(role == v1::ROLE_HOST ? "boot-host" : "boot-target");
  h.set_role(role);
  h.set_transport(v1::TRANSPORT_TCP);
  h.set_sample_rate(spec.sample_rate);
  h.set_salt(spec.salt);
  h.set_start_wall_ns(spec.wall_start_ns);
  h.set_start_mono_ns(role == v1::ROLE_HOST ? spec.host_mono_start : spec.target_mono_start);
  h.set_agent_version("test");
  h.set_session(spec.session);
  return h;
}

// Writes host.ntp and/or target.ntp in dir; timing(i) gives command i's durations.
inline void WriteRun(const std::string& host_path, const std::string& target_path,
                     const RunSpec& spec, const std::function<CommandTiming(int)>& timing,
                     const std::function<CommandId(int)>& identity = nullptr) {
  std::unique_ptr<NtpWriter> host, target;
  if (!host_path.empty()) host = std::move(*NtpWriter::Create(host_path, Header(spec, v1::ROLE_HOST)));
  if (!target_path.empty()) {
    target = std::move(*NtpWriter::Create(target_path, Header(spec, v1::ROLE_TARGET)));
  }
  v1::RecordBatch hb, tb;
  uint64_t seq = 0;
  auto flush = [&](bool force) {
    if (hb.records_size() >= spec.batch || (force && hb.records_size() > 0)) {
      if (spec.device_counters) {
        v1::DeviceCounters* c = hb.add_counters();
        c->set_device("nvme0n1");
        c->set_reads(static_cast<uint64_t>(hb.records_size()) * spec.sample_rate);
        c->set_read_bytes(c->reads() * 4096);
      }
      hb.set_seq(seq++);
      if (host) (void)host->WriteBatch(hb);
      hb.Clear();
    }
    if (tb.records_size() >= spec.batch || (force && tb.records_size() > 0)) {
      tb.set_seq(seq++);
      if (target) (void)target->WriteBatch(tb);
      tb.Clear();
    }
  };
  for (int i = 0; i < spec.commands; ++i) {
    const CommandTiming t = timing(i);
    CommandId id = identity ? identity(i) : CommandId{.cid = static_cast<uint32_t>(i % 64),
                                                      .slba = static_cast<uint64_t>(i) * 8};
    const uint64_t in_target = t.receive + t.submit + t.storage + t.respond + t.send;
    const uint64_t h0 = spec.host_mono_start + 1000 + static_cast<uint64_t>(i) * spec.gap_ns;
    const uint64_t t0 = spec.target_mono_start + 1000 + static_cast<uint64_t>(i) * spec.gap_ns +
                        t.block_submit + t.driver_submit + t.network / 2;
    *hb.add_records() = MakeRecord(v1::ROLE_HOST, id,
                                   HostStamps(h0, t.block_submit, t.driver_submit,
                                              t.network + in_target, t.driver_complete,
                                              t.block_complete),
                                   "nvme0n1");
    *tb.add_records() = MakeRecord(v1::ROLE_TARGET, id,
                                   TargetStamps(t0, t.receive, t.submit, t.storage, t.respond, t.send),
                                   "nullb0");
    hb.mutable_records(hb.records_size() - 1)->set_transport(spec.record_transport);
    tb.mutable_records(tb.records_size() - 1)->set_transport(spec.record_transport);
    flush(false);
  }
  flush(true);
  v1::FileTrailer trailer;
  trailer.set_end_wall_ns(spec.wall_start_ns + spec.span_ns);
  if (host) {
    trailer.set_end_mono_ns(spec.host_mono_start + spec.span_ns);
    (void)host->Finalize(trailer);
  }
  if (target) {
    trailer.set_end_mono_ns(spec.target_mono_start + spec.span_ns);
    (void)target->Finalize(trailer);
  }
}

}  // namespace ntprof::testing
