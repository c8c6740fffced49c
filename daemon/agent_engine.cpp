#include "agent_engine.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <regex>
#include <thread>

namespace ntprof::agent {
namespace {

// libbpf reports through one process-wide print callback; while the engine loads, its messages are
// collected here so a refused program can be named with libbpf's own words.
std::mutex g_libbpf_log_mu;
std::vector<std::string>* g_libbpf_log = nullptr;

int CaptureLibbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return 0;
  std::string text(n + 1, '\0');
  vsnprintf(text.data(), text.size(), fmt, args);
  text.resize(n);
  // One message may hold a whole verifier log: keep it line by line, prefixed like libbpf does.
  std::lock_guard<std::mutex> lock(g_libbpf_log_mu);
  if (!g_libbpf_log) return 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) g_libbpf_log->push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}

class LibbpfLogCapture {
 public:
  LibbpfLogCapture() {
    std::lock_guard<std::mutex> lock(g_libbpf_log_mu);
    g_libbpf_log = &lines_;
    previous_ = libbpf_set_print(CaptureLibbpfPrint);
  }
  ~LibbpfLogCapture() {
    std::lock_guard<std::mutex> lock(g_libbpf_log_mu);
    libbpf_set_print(previous_);
    g_libbpf_log = nullptr;
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(g_libbpf_log_mu);
    return lines_;
  }

 private:
  std::vector<std::string> lines_;
  libbpf_print_fn_t previous_ = nullptr;
};

// From libbpf's messages of a failed load: the program that failed and why, in one line.
bool FindRefusedProgram(const std::vector<std::string>& lines, std::string* program,
                        std::string* reason) {
  static const std::regex kProg(R"(prog '([A-Za-z0-9_]+)': (.*))");
  std::smatch m;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!std::regex_search(*it, m, kProg)) continue;
    *program = m[1];
    break;
  }
  if (program->empty()) return false;
  // The verifier's last word before the end of the log says what it rejected.
  bool in_log = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].find("'" + *program + "': -- BEGIN PROG LOAD LOG --") != std::string::npos)
      in_log = true;
    if (!in_log || lines[i].find("-- END PROG LOAD LOG --") == std::string::npos) continue;
    size_t j = i - 1;
    while (j > 0 && lines[j].rfind("processed ", 0) == 0) --j;  // skip the statistics line
    *reason = "rejected by the verifier: " + lines[j];
    return true;
  }
  // Else the first message about that program that says what went wrong.
  for (const std::string& line : lines) {
    if (!std::regex_search(line, m, kProg) || m[1] != *program) continue;
    std::string what = m[2];
    if (what.find("failed") != std::string::npos || what.find("error") != std::string::npos ||
        what.find("invalid") != std::string::npos) {
      *reason = "refused at load: " + what;
      return true;
    }
  }
  *reason = "refused at load (see libbpf log)";
  return true;
}

uint64_t OldestStamp(const ntprof_record& r) {
  uint64_t oldest = 0;
  for (uint64_t s : r.stamps) {
    if (s && (!oldest || s < oldest)) oldest = s;
  }
  return oldest;
}

template <class Key, class Value>
std::vector<std::pair<Key, Value>> DumpMap(struct bpf_map* map) {
  std::vector<std::pair<Key, Value>> out;
  if (!map) return out;
  Key key{}, next{};
  Key* cur = nullptr;
  while (bpf_map__get_next_key(map, cur, &next, sizeof(Key)) == 0) {
    Value v{};
    if (bpf_map__lookup_elem(map, &next, sizeof(Key), &v, sizeof(Value), 0) == 0)
      out.emplace_back(next, v);
    key = next;
    cur = &key;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentEngine>> AgentEngine::Start(const SessionOptions& options,
                                                                const KernelFacts& facts,
                                                                LogCallback log) {
  PlanInputs inputs{.external_btf = !options.btf_path.empty(),
                    .prefer_attach = options.prefer_attach};
  HookPlan plan = PlanHooks(options.role, options.transport, facts, inputs);
  std::unique_ptr<AgentEngine> engine(new AgentEngine(options, std::move(plan)));
  if (const TransportRow* row = FindTransport(options.transport); row && row->page_addresses) {
    engine->vmemmap_base_addr_ = facts.SymbolAddress("vmemmap_base");
    engine->page_offset_base_addr_ = facts.SymbolAddress("page_offset_base");
  }
  // Every refused program removes one variant, so this ends.
  for (int attempt = 0; attempt < 32; ++attempt) {
    if (absl::Status ok = engine->plan_.CheckRequired(); !ok.ok()) return ok;
    bool retry = false;
    absl::Status s = engine->TryLoadAndAttach(log, &retry);
    if (s.ok()) return engine;
    if (!retry) return s;
    if (log) log(std::string(s.message()) + "; trying the next variant");
  }
  return absl::InternalError("BPF load kept failing; giving up after 32 attempts");
}

absl::Status AgentEngine::TryLoadAndAttach(LogCallback& log, bool* retry) {
  *retry = false;
  Detach();
  object_.reset();
  auto opened = OpenBpfObject(options_.role, options_.transport, options_.btf_path);
  if (!opened.ok()) return opened.status();
  object_ = std::move(*opened);

  // Disable the losers: only the chosen variant of each hook is loaded.
  std::vector<std::string> chosen = plan_.ChosenPrograms();
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, object_->object()) {
    bool use = std::find(chosen.begin(), chosen.end(), bpf_program__name(prog)) != chosen.end();
    bpf_program__set_autoload(prog, use);
  }
  object_->SetSalt(options_.salt);
  object_->SetPageBases(vmemmap_base_addr_, page_offset_base_addr_);

  {
    LibbpfLogCapture capture;
    int err = object_->Load();
    std::vector<std::string> lines = capture.lines();
    if (log) {
      for (const std::string& l : lines) log("libbpf: " + l);
    }
    if (err) {
      std::string program, reason;
      if (FindRefusedProgram(lines, &program, &reason) && plan_.MarkFailed(program, reason)) {
        *retry = true;
        return absl::UnavailableError("program " + program + " " + reason);
      }
      return absl::InternalError(std::string("cannot load BPF object ") + object_->name() + ": " +
                                 std::strerror(-err) + (lines.empty() ? "" : " (" + lines.back() + ")"));
    }
  }

  for (const std::string& name : chosen) {
    struct bpf_program* p = bpf_object__find_program_by_name(object_->object(), name.c_str());
    if (!p) return absl::InternalError("BPF program " + name + " missing from " + object_->name());
    struct bpf_link* link = bpf_program__attach(p);
    if (!link) {
      int err = errno;
      std::string reason = std::string("refused at attach: ") + std::strerror(err);
      plan_.MarkFailed(name, reason);
      *retry = true;
      return absl::UnavailableError("program " + name + " " + reason);
    }
    if (const HookDecision* d = OnDemandDecision(name)) {
      on_demand_links_[d->hook.name].push_back(link);
    } else {
      links_.push_back(link);
    }
  }
  // On-demand hooks are proven attachable above; they wait detached for the recorder to ask.
  std::vector<std::string> on_demand;
  for (const auto& [hook, links] : on_demand_links_) on_demand.push_back(hook);
  for (const std::string& hook : on_demand) (void)SetOnDemandHook(hook, false);

  ring_ = ring_buffer__new(bpf_map__fd(Map("events")), &AgentEngine::OnRingRecord, this, nullptr);
  if (!ring_) return absl::InternalError(std::string("cannot open the ring buffer: ") + std::strerror(errno));
  // every hook is attached: from now on a sampled command is seen by all of them
  return WriteSamplingSwitch(options_.sample_rate);
}

absl::Status AgentEngine::WriteSamplingSwitch(uint32_t rate) {
  ntprof_sampling_switch* sw = object_ ? object_->SamplingSwitch() : nullptr;
  if (!sw) return absl::InternalError("no sampling switch: the BPF object is not loaded");
  // threshold first, then rate: a hook reading both meanwhile still takes the old rate's decision
  // or the new one's (ntprof_sampler.h)
  const ntprof_sampling_switch next = ntprof_sampling_switch_for(rate);
  __atomic_store_n(&sw->threshold, next.threshold, __ATOMIC_RELEASE);
  __atomic_store_n(&sw->rate, next.rate, __ATOMIC_RELEASE);
  return absl::OkStatus();
}

absl::Status AgentEngine::SetSampleRate(uint32_t rate) { return WriteSamplingSwitch(rate); }

std::optional<int64_t> AgentEngine::SampledInFlight() const {
  const int64_t* count = object_ ? object_->SampledInFlight() : nullptr;
  if (!count) return std::nullopt;
  return __atomic_load_n(count, __ATOMIC_ACQUIRE);
}

int64_t AgentEngine::StopSampling(int max_wait_ms) {
  if (!object_ || !WriteSamplingSwitch(0).ok()) return 0;
  std::optional<int64_t> in_flight = SampledInFlight();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_wait_ms);
  while (in_flight && *in_flight > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    in_flight = SampledInFlight();
  }
  return in_flight && *in_flight > 0 ? *in_flight : 0;
}

AgentEngine::~AgentEngine() { Detach(); }

const HookDecision* AgentEngine::OnDemandDecision(const std::string& program) const {
  for (const HookDecision& d : plan_.hooks()) {
    const VariantVerdict* v = d.chosen_variant();
    if (d.hook.on_demand && v &&
        std::find(v->programs.begin(), v->programs.end(), program) != v->programs.end())
      return &d;
  }
  return nullptr;
}

absl::StatusOr<bool> AgentEngine::SetOnDemandHook(const std::string& hook, bool attached) {
  const VariantVerdict* chosen = nullptr;
  for (const HookDecision& d : plan_.hooks()) {
    if (d.hook.name == hook && d.hook.on_demand) chosen = d.chosen_variant();
  }
  if (!chosen || !object_) return absl::NotFoundError("no on-demand hook " + hook + " is loaded");
  auto it = on_demand_links_.find(hook);
  if ((it != on_demand_links_.end()) == attached) return false;
  if (!attached) {
    for (struct bpf_link* l : it->second) bpf_link__destroy(l);
    on_demand_links_.erase(it);
    return true;
  }
  std::vector<struct bpf_link*> links;
  for (const std::string& name : chosen->programs) {
    struct bpf_program* p = bpf_object__find_program_by_name(object_->object(), name.c_str());
    struct bpf_link* link = p ? bpf_program__attach(p) : nullptr;
    if (!link) {
      const int err = errno;
      for (struct bpf_link* l : links) bpf_link__destroy(l);
      return absl::UnavailableError("cannot attach " + name + " again: " + std::strerror(err));
    }
    links.push_back(link);
  }
  on_demand_links_[hook] = std::move(links);
  return true;
}

void AgentEngine::DetachHooks() {
  for (struct bpf_link* l : links_) bpf_link__destroy(l);
  links_.clear();
  for (auto& [hook, links] : on_demand_links_) {
    for (struct bpf_link* l : links) bpf_link__destroy(l);
  }
  on_demand_links_.clear();
}

void AgentEngine::Detach() {
  if (ring_) ring_buffer__free(ring_);
  ring_ = nullptr;
  DetachHooks();
}

struct bpf_map* AgentEngine::Map(const char* name) const {
  return object_ ? bpf_object__find_map_by_name(object_->object(), name) : nullptr;
}

namespace {
// Makes the set `map` holds `keys`; *changed tells whether it had to.
template <class Key>
absl::Status ReplaceSet(struct bpf_map* map, const std::vector<Key>& keys, const char* what,
                        bool* changed) {
  if (!map) return absl::InternalError(std::string("no map for ") + what);
  std::vector<Key> present;
  *changed = false;
  for (const auto& [k, v] : DumpMap<Key, uint8_t>(map)) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      bpf_map__delete_elem(map, &k, sizeof(k), 0);
      *changed = true;
    } else {
      present.push_back(k);
    }
  }
  // Called every interval: a key already there is left alone (rewriting it would replace the
  // hash map's element under the programs reading it, a syscall per key per second for nothing).
  uint8_t one = 1;
  for (const Key& k : keys) {
    if (std::find(present.begin(), present.end(), k) != present.end()) continue;
    *changed = true;
    if (bpf_map__update_elem(map, &k, sizeof(k), &one, sizeof(one), BPF_ANY))
      return absl::InternalError(std::string("cannot update ") + what + ": " + std::strerror(errno));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status AgentEngine::SetWatchedDevices(const std::vector<uint32_t>& kernel_devs) {
  bool changed = false;
  absl::Status st = ReplaceSet<uint32_t>(Map("watched_devs"), kernel_devs, "watched devices",
                                         &changed);
  // The NVMe hosts cache whether a request queue's namespace is watched (bpf/ntprof_nvme_host.h):
  // a new generation, counted after the set changed, makes every cached answer stale.
  struct bpf_map* generation = Map("watched_generation");
  if (!st.ok() || !changed || !generation) return st;
  uint32_t zero = 0, n = 0;
  if (bpf_map__lookup_elem(generation, &zero, sizeof(zero), &n, sizeof(n), 0) == 0) ++n;
  if (bpf_map__update_elem(generation, &zero, sizeof(zero), &n, sizeof(n), BPF_ANY))
    return absl::InternalError(std::string("cannot update watched_generation: ") +
                               std::strerror(errno));
  return absl::OkStatus();
}

int AgentEngine::OnRingRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<AgentEngine*>(ctx);
  if (size < sizeof(ntprof_record) || !self->on_record_) return 0;
  ntprof_record rec;
  std::memcpy(&rec, data, sizeof(rec));
  (*self->on_record_)(rec);
  return 0;
}

absl::StatusOr<int> AgentEngine::Poll(int timeout_ms, const RecordCallback& on_record) {
  on_record_ = &on_record;
  int n = ring_buffer__poll(ring_, timeout_ms);
  if (n == -EINTR) n = 0;
  // The BPF side wakes this poll only once the ring fills up (ntprof_emit): what waits below that
  // is taken here, after the wait.
  if (n >= 0) {
    int more = ring_buffer__consume(ring_);
    n = more < 0 ? more : n + more;
  }
  on_record_ = nullptr;
  if (n < 0) return absl::InternalError(std::string("ring buffer poll: ") + std::strerror(-n));
  return n;
}

KernelLosses AgentEngine::ReadLosses() const {
  KernelLosses out = ReadCountedLosses();
  out.nested_probe_miss = ReadNestedProbeMisses();
  return out;
}

KernelLosses AgentEngine::ReadCountedLosses() const {
  KernelLosses out;
  struct bpf_map* map = Map("losses");
  if (!map) return out;
  const int ncpu = std::max(libbpf_num_possible_cpus(), 1);
  // Every cause's per-CPU values in one batched lookup; a kernel without batched array lookups
  // gets one lookup per cause.
  std::vector<uint32_t> keys(NTPROF_LOSS_CAUSES);
  std::vector<uint64_t> values(static_cast<size_t>(NTPROF_LOSS_CAUSES) * ncpu);
  uint32_t out_batch = 0;
  uint32_t count = NTPROF_LOSS_CAUSES;
  const int err = bpf_map_lookup_batch(bpf_map__fd(map), nullptr, &out_batch, keys.data(),
                                       values.data(), &count, nullptr);
  if ((err < 0 && err != -ENOENT) || count != NTPROF_LOSS_CAUSES) {
    count = 0;
    for (uint32_t cause = 0; cause < NTPROF_LOSS_CAUSES; ++cause) {
      keys[cause] = cause;
      if (bpf_map__lookup_elem(map, &cause, sizeof(cause), &values[cause * ncpu],
                               ncpu * sizeof(uint64_t), 0) != 0)
        std::fill_n(&values[cause * ncpu], ncpu, 0);
      ++count;
    }
  }
  uint64_t total[NTPROF_LOSS_CAUSES] = {};
  for (uint32_t i = 0; i < count; ++i) {
    if (keys[i] >= NTPROF_LOSS_CAUSES) continue;
    for (int cpu = 0; cpu < ncpu; ++cpu) total[keys[i]] += values[i * ncpu + cpu];
  }
  out.ring_buffer_full = total[NTPROF_LOSS_RINGBUF_FULL];
  out.inflight_table_full = total[NTPROF_LOSS_INFLIGHT_FULL];
  out.socket_table_full = total[NTPROF_LOSS_SOCKET_TABLE_FULL];
  out.completion_missed = total[NTPROF_LOSS_COMPLETION_MISSED];
  return out;
}

uint64_t AgentEngine::ReadNestedProbeMisses() const {
  uint64_t misses = 0;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, object_->object()) {
    int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    struct bpf_prog_info info = {};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) misses += info.recursion_misses;
  }
  return misses;
}

std::map<uint32_t, std::string> AgentEngine::ReadSubsystemNames() const {
  std::map<uint32_t, std::string> out;
  for (const auto& [id, name] : DumpMap<uint32_t, ntprof_subsys_name>(Map("subsys_names"))) {
    out[id] = std::string(name.nqn, strnlen(name.nqn, sizeof(name.nqn)));
  }
  return out;
}

template <class Slot>
bool AgentEngine::MapSlotTable(const char* name, std::optional<SlotTable<Slot>>& table) const {
  if (table) return true;
  struct bpf_map* map = Map(name);
  auto mapped = SlotTable<Slot>::Of(map ? bpf_map__fd(map) : -1);
  if (!mapped.ok()) return false;
  table.emplace(std::move(*mapped));
  return true;
}

size_t AgentEngine::SweepInflight(uint64_t before_mono_ns, const RecordCallback& evicted) {
  // a USDT-only object (SPDK) keeps no in-flight table
  if (!MapSlotTable("inflight", inflight_slots_)) return 0;
  // The count never falls short of the table (ntprof_bpf_common.h): at 0 the table is empty, and
  // reading every slot (3 MiB) to find that out is most of an idle agent's CPU under emulation.
  if (std::optional<int64_t> in_flight = SampledInFlight(); in_flight && *in_flight <= 0) return 0;
  // Every object keys its in-flight table by request (host: struct request *, target: struct
  // nvmet_req *).
  size_t n = 0;
  inflight_slots_->ForEachUsed([&](uint32_t index, ntprof_record_slot slot) {
    uint64_t oldest = OldestStamp(slot.rec);
    if (!oldest || oldest >= before_mono_ns) return;
    if (!inflight_slots_->Release(index, slot.key)) return;  // completed meanwhile
    slot.rec.flags |= NTPROF_F_EVICTED;
    evicted(slot.rec);
    ++n;
  });
  if (options_.role == Role::kTarget) return n;
  // Host: cid index entries whose request is gone (swept above, or a retried command got a new
  // cid) go too.
  if (!MapSlotTable("cid_index", cid_slots_)) return n;  // local block devices have no cid index
  cid_slots_->ForEachUsed([&](uint32_t index, const ntprof_index_slot& slot) {
    auto request = inflight_slots_->Find(slot.value);
    if (!request || ntprof_cid_key_packed(request->rec.ctrl, request->rec.qid,
                                          request->rec.cid) != slot.key)
      cid_slots_->Release(index, slot.key);
  });
  return n;
}

}  // namespace ntprof::agent
