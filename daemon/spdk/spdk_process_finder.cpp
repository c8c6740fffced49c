#include "spdk_process_finder.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ntprof::agent::spdk {
namespace {

std::string FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

}  // namespace

const char* SpdkRoleFlag(SpdkRole role) {
  return role == SpdkRole::kTarget ? "--spdk-target" : "--spdk-host";
}

const std::vector<std::string>& RoleProbeNames(SpdkRole role) {
  static const std::vector<std::string> target{NTPROF_PROBE_NAME_NVMF_TCP, NTPROF_PROBE_NAME_NVMF_RDMA};
  static const std::vector<std::string> host{NTPROF_PROBE_NAME_NVME_TCP, NTPROF_PROBE_NAME_NVME_RDMA};
  return role == SpdkRole::kTarget ? target : host;
}

uint32_t ProbeKind(const std::string& name) {
  if (name == NTPROF_PROBE_NAME_NVMF_TCP) return NTPROF_SPDK_NVMF_TCP;
  if (name == NTPROF_PROBE_NAME_NVMF_RDMA) return NTPROF_SPDK_NVMF_RDMA;
  if (name == NTPROF_PROBE_NAME_NVME_TCP) return NTPROF_SPDK_NVME_TCP;
  if (name == NTPROF_PROBE_NAME_NVME_RDMA) return NTPROF_SPDK_NVME_RDMA;
  return 0;
}

absl::StatusOr<const ElfProbeFile*> ElfCache::Get(const std::string& path) {
  auto id = FileIdOf(path);
  if (!id.ok()) return id.status();
  auto it = files_.find(*id);
  if (it != files_.end()) return it->second.get();
  auto f = ElfProbeFile::Open(path);
  if (!f.ok()) return f.status();
  auto& slot = files_[*id];
  slot = std::make_unique<ElfProbeFile>(std::move(*f));
  return slot.get();
}

std::string UnresolvedLibrariesNote(const SpdkTargetSpec& spec) {
  return absl::StrCat("no ntprof probes in ", spec.binary, " or the libraries this agent can find (",
                      absl::StrJoin(spec.unresolved_libraries, ", "),
                      " not found here: the process's LD_LIBRARY_PATH may name them); each of its "
                      "processes is checked in the libraries it has mapped");
}

bool SpdkProcessFinder::HasRoleProbes(const ElfProbeFile& f) const {
  const auto& names = RoleProbeNames(role_);
  return std::any_of(f.ntprof_sites().begin(), f.ntprof_sites().end(), [&](const UsdtSite& s) {
    return std::find(names.begin(), names.end(), s.name) != names.end();
  });
}

absl::StatusOr<std::unique_ptr<SpdkProcessFinder>> SpdkProcessFinder::Create(
    SpdkRole role, const std::vector<std::string>& args) {
  std::unique_ptr<SpdkProcessFinder> finder(new SpdkProcessFinder(role));
  for (const std::string& arg : args) {
    auto spec = finder->ParseArg(arg);
    if (!spec.ok()) return spec.status();
    finder->specs_.push_back(std::move(*spec));
  }
  return finder;
}

absl::StatusOr<SpdkTargetSpec> SpdkProcessFinder::ParseArg(const std::string& arg) {
  SpdkTargetSpec spec;
  spec.arg = arg;
  const std::string probes = absl::StrJoin(RoleProbeNames(role_), "/");
  int pid = 0;
  if (absl::SimpleAtoi(arg, &pid)) {
    if (pid <= 0) return absl::InvalidArgumentError(absl::StrCat(SpdkRoleFlag(role_), " ", arg, ": not a process id"));
    spec.pid = pid;
    auto process = Inspect(pid);  // the clear messages: gone, or not built with the contract
    if (!process.ok()) return process.status();
    return spec;
  }
  spec.binary = FindInPath(arg);
  auto bin = elf_.Get(spec.binary);
  if (!bin.ok()) {
    return absl::NotFoundError(absl::StrCat(SpdkRoleFlag(role_), " ", arg, ": ", bin.status().message(),
                                            " (give the SPDK binary's path or a running PID)"));
  }
  spec.binary_id = (*bin)->id();
  spec.is_library = spec.binary.find(".so") != std::string::npos;
  if (HasRoleProbes(**bin)) spec.probe_objects.push_back(spec.binary);
  const NeededLibraries needed = ResolveNeededLibraries(**bin);
  for (const std::string& lib : needed.found) {
    auto f = elf_.Get(lib);
    if (f.ok() && HasRoleProbes(**f)) spec.probe_objects.push_back(lib);
  }
  if (spec.probe_objects.empty() && !needed.unresolved.empty()) {
    // An SPDK built with shared libraries keeps its probes in libspdk_nvmf.so / libspdk_nvme.so,
    // which its process finds through its own LD_LIBRARY_PATH, not this agent's: each matching
    // process is looked at through the libraries it actually mapped (Inspect).
    spec.unresolved_libraries = needed.unresolved;
    return spec;
  }
  if (spec.probe_objects.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        spec.binary, " has no ntprof USDT probes (", probes, ") in itself or in the libraries it ",
        "loads, so ntprofd cannot see its commands: build it with the ntprof probe contract ",
        "(docs/spdk.md); check with: readelf -n ",
        spec.binary, " | grep -A2 ntprof"));
  }
  return spec;
}

std::vector<pid_t> SpdkProcessFinder::MatchingPids(const std::map<pid_t, uint64_t>& skip) {
  std::vector<pid_t> out;
  std::vector<pid_t> candidates;
  const pid_t self = getpid();
  for (const SpdkTargetSpec& s : specs_) {
    if (s.pid) candidates.push_back(*s.pid);
  }
  const bool any_binary = std::any_of(specs_.begin(), specs_.end(),
                                      [](const SpdkTargetSpec& s) { return !s.pid; });
  if (any_binary) {
    for (pid_t pid : ListPids()) candidates.push_back(pid);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (pid_t pid : candidates) {
    if (pid == self || skip.count(pid)) continue;
    bool match = false;
    for (const SpdkTargetSpec& s : specs_) {
      if (s.pid) {
        match = *s.pid == pid;
      } else if (!s.is_library) {
        auto exe = FileIdOf(absl::StrCat("/proc/", pid, "/exe"));
        match = exe.ok() && *exe == s.binary_id;
      } else {
        auto info = ReadProcess(pid);
        match = info.ok() && std::any_of(info->maps.begin(), info->maps.end(),
                                         [&](const MappedFile& m) { return m.id == s.binary_id; });
      }
      if (match) break;
    }
    if (match) out.push_back(pid);
  }
  return out;
}

absl::StatusOr<SpdkProcess> SpdkProcessFinder::Inspect(pid_t pid) {
  auto info = ReadProcess(pid);
  if (!info.ok()) {
    return absl::NotFoundError(absl::StrCat(SpdkRoleFlag(role_), " ", pid, ": ", info.status().message()));
  }
  SpdkProcess p;
  p.info = std::move(*info);
  std::set<FileId> seen;
  for (const MappedFile& m : p.info.maps) {
    if (!seen.insert(m.id).second) continue;
    const std::string path = OpenablePath(pid, m);
    auto f = elf_.Get(path);
    if (!f.ok() || !HasRoleProbes(**f)) continue;
    p.objects.push_back({path, *f});
  }
  if (p.objects.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "process ", pid, " (", p.info.comm, ") maps no object with ntprof ",
        role_ == SpdkRole::kTarget ? "target" : "host", " probes (",
        absl::StrJoin(RoleProbeNames(role_), ", "),
        "): it is not an SPDK application built with the ntprof probe contract (docs/spdk.md)",
        role_ == SpdkRole::kTarget ? "; for an SPDK host use --spdk-host" : "; for an SPDK target use --spdk-target"));
  }
  return p;
}

}  // namespace ntprof::agent::spdk
