// SpdkUsdtProbes: the BPF side of an SPDK recording (bpf/spdk_usdt.bpf.c) - one program, attached
// per process to each `ntprof` USDT probe site of the role, with the probe kind as attach cookie;
// one ring buffer of struct ntprof_spdk_event. Attaching per PID means processes that are not
// recorded never trap, even when they map the same library.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ntprof_spdk_event.h"
#include "spdk_process_finder.h"

struct bpf_link;
struct ring_buffer;
struct spdk_usdt;

namespace ntprof::agent::spdk {

class SpdkUsdtProbes {
 public:
  using EventCallback = std::function<void(const ntprof_spdk_event&)>;

  // Opens and loads the BPF object (no probe is attached yet).
  static absl::StatusOr<std::unique_ptr<SpdkUsdtProbes>> Load();
  ~SpdkUsdtProbes();
  SpdkUsdtProbes(const SpdkUsdtProbes&) = delete;
  SpdkUsdtProbes& operator=(const SpdkUsdtProbes&) = delete;

  // Attaches to every site of the role's probes in the process's objects. Returns a description
  // per attached probe ("nvmf_tcp_done in /usr/local/lib/libspdk_nvmf.so").
  absl::StatusOr<std::vector<std::string>> Attach(const SpdkProcess& process, SpdkRole role);
  void Detach(pid_t pid);
  size_t attached_processes() const { return links_.size(); }

  // Waits up to timeout_ms for events and hands each to on_event. Returns how many.
  absl::StatusOr<int> Poll(int timeout_ms, const EventCallback& on_event);
  uint64_t ring_buffer_full() const;

 private:
  SpdkUsdtProbes() = default;
  static int OnEvent(void* ctx, void* data, size_t size);

  struct spdk_usdt* skel_ = nullptr;
  struct ring_buffer* ring_ = nullptr;
  std::map<pid_t, std::vector<struct bpf_link*>> links_;
  const EventCallback* on_event_ = nullptr;  // valid during Poll
};

}  // namespace ntprof::agent::spdk
