// AgentEngine: the kernel side of a recording, as explicit phases
//   open -> plan (what this kernel offers) -> disable losing variants -> set rodata -> load -> attach
// with every error returned, not printed. A program the kernel refuses at load or attach marks its
// variant unavailable and the cycle is redone with the hook's next candidate, so the plan ends up
// describing what really attached. Then: poll the ring buffer, read counters, sweep stale commands.
//
// The `record` command and `ntprofd serve` (service/) drive the same engine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf_object_handle.h"
#include "hook_plan.h"
#include "kernel_facts.h"
#include "ntprof_maps.h"
#include "ntprof_record.h"
#include "session_options.h"
#include "slot_table.h"

struct ring_buffer;
struct bpf_link;
struct bpf_map;

namespace ntprof::agent {

// What the kernel side lost, cumulative since Start.
struct KernelLosses {
  uint64_t ring_buffer_full = 0;
  uint64_t inflight_table_full = 0;
  uint64_t socket_table_full = 0;  // NVMe/TCP host sockets pushed out of the full socket table
  uint64_t nested_probe_miss = 0;  // sum of the programs' recursion_misses (trampolines skip
                                   // calls that nest on one CPU)
  uint64_t completion_missed = 0;  // completion hooks the kernel did not run (see
                                   // host_same_command in bpf/ntprof_host_block.h)
};

using RecordCallback = std::function<void(const ntprof_record&)>;
using LogCallback = std::function<void(const std::string&)>;

class AgentEngine {
 public:
  // Runs the phases. log (optional) receives libbpf's messages and the engine's retries.
  static absl::StatusOr<std::unique_ptr<AgentEngine>> Start(const SessionOptions& options,
                                                            const KernelFacts& facts,
                                                            LogCallback log = nullptr);
  ~AgentEngine();
  AgentEngine(const AgentEngine&) = delete;
  AgentEngine& operator=(const AgentEngine&) = delete;

  const HookPlan& plan() const { return plan_; }
  const SessionOptions& options() const { return options_; }

  // Devices (kernel dev_t) whose commands are counted and sampled; replaces the previous set.
  absl::Status SetWatchedDevices(const std::vector<uint32_t>& kernel_devs);

  // Samples new commands at one in `rate` from now on (several sessions: the finest of theirs).
  // One map update: safe from any thread while the engine is attached.
  absl::Status SetSampleRate(uint32_t rate);

  // Samples no new command, then waits up to max_wait_ms for the sampled ones still in flight to
  // reach their last stamp while every hook is still attached. The first half of a recording's
  // end: detached hooks one by one under running I/O would leave commands sampled with part of
  // their stamps. Returns how many were still in flight when it gave up (0: all done).
  int64_t StopSampling(int max_wait_ms);
  // The BPF side's count of sampled commands in flight (never below the entries of its table;
  // above it after a sweep), or nullopt when it cannot be read.
  std::optional<int64_t> SampledInFlight() const;

  // Attaches or detaches an on-demand hook's chosen program (HookSpec::on_demand); false when it
  // already was as asked. The program was loaded and attached once at start, so attaching it
  // again only fails on a kernel change (a module removed): that is the error returned.
  absl::StatusOr<bool> SetOnDemandHook(const std::string& hook, bool attached);
  bool OnDemandHookAttached(const std::string& hook) const { return on_demand_links_.count(hook); }
  // Stops the kernel side producing records (the ring buffer stays readable): the end of a
  // recording, so what is still in flight afterwards can be counted without racing a completion.
  void DetachHooks();

  // Waits up to timeout_ms for records and hands each to on_record. Returns how many.
  absl::StatusOr<int> Poll(int timeout_ms, const RecordCallback& on_record);

  KernelLosses ReadLosses() const;
  // The losses the BPF side counts itself (every field but nested_probe_miss): one system call.
  KernelLosses ReadCountedLosses() const;
  // nested_probe_miss alone: one system call per program.
  uint64_t ReadNestedProbeMisses() const;
  // Target: agent-local subsystem id -> NQN.
  std::map<uint32_t, std::string> ReadSubsystemNames() const;
  // Forgets sampled commands whose first stamp is older than before_mono_ns (they never completed:
  // lost PDU, controller reset) and hands them to evicted with NTPROF_F_EVICTED set.
  size_t SweepInflight(uint64_t before_mono_ns, const RecordCallback& evicted);

 private:
  AgentEngine(SessionOptions options, HookPlan plan) : options_(std::move(options)), plan_(std::move(plan)) {}
  // The BPF side's sampling switch (ntprof_bpf_common.h: ntprof_switch): the rate, 0 = off.
  absl::Status WriteSamplingSwitch(uint32_t rate);
  // One open -> load -> attach attempt following plan_. On a refused program, marks it in plan_.
  absl::Status TryLoadAndAttach(LogCallback& log, bool* retry);
  void Detach();
  // The on-demand hook whose chosen variant has `program`, or nullptr.
  const HookDecision* OnDemandDecision(const std::string& program) const;
  struct bpf_map* Map(const char* name) const;
  // Maps the object's slot table `name` into `table` once (after the object's final load); false
  // when the object has no such table.
  template <class Slot>
  bool MapSlotTable(const char* name, std::optional<SlotTable<Slot>>& table) const;

  SessionOptions options_;
  HookPlan plan_;
  uint64_t vmemmap_base_addr_ = 0;      // kallsyms (KernelFacts::SymbolAddress), for the NVMe/TCP
  uint64_t page_offset_base_addr_ = 0;  // objects' page -> address (ntprof_bpf_common.h)
  std::unique_ptr<BpfObjectHandle> object_;
  std::vector<struct bpf_link*> links_;
  // On-demand hooks' links by hook name, while attached.
  std::map<std::string, std::vector<struct bpf_link*>> on_demand_links_;
  // The in-flight slot tables, mapped at the first sweep (after the object's final load).
  std::optional<SlotTable<ntprof_record_slot>> inflight_slots_;
  std::optional<SlotTable<ntprof_index_slot>> cid_slots_;
  struct ring_buffer* ring_ = nullptr;
  const RecordCallback* on_record_ = nullptr;  // valid during Poll
  static int OnRingRecord(void* ctx, void* data, size_t size);
};

}  // namespace ntprof::agent
