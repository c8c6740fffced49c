#include "spdk_usdt_probes.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "spdk_usdt.skel.h"

namespace ntprof::agent::spdk {

absl::StatusOr<std::unique_ptr<SpdkUsdtProbes>> SpdkUsdtProbes::Load() {
  std::unique_ptr<SpdkUsdtProbes> p(new SpdkUsdtProbes());
  p->skel_ = spdk_usdt__open();
  if (!p->skel_) return absl::InternalError(absl::StrCat("cannot open the SPDK BPF object: ", strerror(errno)));
  if (int err = spdk_usdt__load(p->skel_); err) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot load the SPDK BPF program: ", strerror(-err),
        " (run ntprofd as root, or with CAP_BPF + CAP_PERFMON + CAP_SYS_ADMIN)"));
  }
  p->ring_ = ring_buffer__new(bpf_map__fd(p->skel_->maps.spdk_events), &SpdkUsdtProbes::OnEvent,
                              p.get(), nullptr);
  if (!p->ring_) return absl::InternalError(absl::StrCat("cannot open the SPDK ring buffer: ", strerror(errno)));
  return p;
}

SpdkUsdtProbes::~SpdkUsdtProbes() {
  for (auto& [pid, links] : links_) {
    for (bpf_link* l : links) bpf_link__destroy(l);
  }
  if (ring_) ring_buffer__free(ring_);
  if (skel_) spdk_usdt__destroy(skel_);
}

absl::StatusOr<std::vector<std::string>> SpdkUsdtProbes::Attach(const SpdkProcess& process,
                                                                 SpdkRole role) {
  const pid_t pid = process.info.pid;
  std::vector<bpf_link*> links;
  std::vector<std::string> attached;
  for (const SpdkProcess::ProbeObject& obj : process.objects) {
    for (const std::string& name : RoleProbeNames(role)) {
      const auto& sites = obj.elf->ntprof_sites();
      const auto n = std::count_if(sites.begin(), sites.end(),
                                   [&](const UsdtSite& s) { return s.name == name; });
      if (n == 0) continue;
      const uint32_t kind =
          ProbeKind(name) | (obj.elf->is_probe_library() ? NTPROF_SPDK_KIND_PROBE_LIBRARY : 0);
      LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = kind);
      bpf_link* link = bpf_program__attach_usdt(skel_->progs.ntprof_spdk_done, pid,
                                                obj.open_path.c_str(), NTPROF_PROBE_PROVIDER,
                                                name.c_str(), &opts);
      if (!link) {
        const int err = errno;
        for (bpf_link* l : links) bpf_link__destroy(l);
        return absl::UnavailableError(absl::StrCat(
            "cannot attach to ", name, " in ", obj.open_path, " of process ", pid, " (",
            process.info.comm, "): ", strerror(err),
            err == ENOENT || err == ESRCH ? " (the process exited?)" : ""));
      }
      links.push_back(link);
      attached.push_back(absl::StrCat(name, " (", n, n == 1 ? " site" : " sites", ") in ", obj.open_path));
    }
  }
  Detach(pid);  // a reused PID: drop the links of the process that had it before
  links_[pid] = std::move(links);
  return attached;
}

void SpdkUsdtProbes::Detach(pid_t pid) {
  auto it = links_.find(pid);
  if (it == links_.end()) return;
  for (bpf_link* l : it->second) bpf_link__destroy(l);
  links_.erase(it);
}

int SpdkUsdtProbes::OnEvent(void* ctx, void* data, size_t size) {
  auto* self = static_cast<SpdkUsdtProbes*>(ctx);
  if (size < sizeof(ntprof_spdk_event) || !self->on_event_) return 0;
  (*self->on_event_)(*static_cast<const ntprof_spdk_event*>(data));
  return 0;
}

absl::StatusOr<int> SpdkUsdtProbes::Poll(int timeout_ms, const EventCallback& on_event) {
  on_event_ = &on_event;
  int n = ring_buffer__poll(ring_, timeout_ms);
  on_event_ = nullptr;
  if (n == -EINTR) return 0;
  if (n < 0) return absl::InternalError(absl::StrCat("SPDK ring buffer poll failed: ", strerror(-n)));
  return n;
}

uint64_t SpdkUsdtProbes::ring_buffer_full() const {
  return __atomic_load_n(&skel_->bss->ringbuf_full, __ATOMIC_RELAXED);
}

}  // namespace ntprof::agent::spdk
