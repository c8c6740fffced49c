// Which processes an `--spdk-target` / `--spdk-host` argument names, and what each of them offers:
// the mapped objects (the binary, libspdk_*.so) that carry the role's `ntprof` USDT probes.
//
// An argument is a PID (that one process) or a BINARY (every process that maps that file, now or
// later: an executable such as nvmf_tgt, or a library such as libspdk_nvmf.so).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "elf_probe_file.h"
#include "ntprof_spdk_event.h"
#include "process_maps.h"

namespace ntprof::agent::spdk {

enum class SpdkRole { kTarget, kHost };
const char* SpdkRoleFlag(SpdkRole role);  // "--spdk-target" / "--spdk-host"
// The probe names of a role ("nvmf_tcp_done", "nvmf_rdma_done" for targets).
const std::vector<std::string>& RoleProbeNames(SpdkRole role);
// enum ntprof_spdk_probe_kind of a probe name, 0 if it is not one of ours.
uint32_t ProbeKind(const std::string& probe_name);

struct SpdkTargetSpec {
  std::string arg;             // as given on the command line
  std::optional<pid_t> pid;    // PID form
  std::string binary;          // BINARY form: resolved path
  FileId binary_id;
  bool is_library = false;     // match processes by their maps, not only their executable
  std::vector<std::string> probe_objects;  // BINARY form: itself and/or libraries with probes
  // BINARY form: libraries it needs that this agent cannot find (the process's own
  // LD_LIBRARY_PATH may): their probes are looked for in each process's maps
  std::vector<std::string> unresolved_libraries;
};

// What a BINARY whose probes may live in libraries only its process can find means for the user.
std::string UnresolvedLibrariesNote(const SpdkTargetSpec& spec);

// Parses ELF files once per file (by identity), for the life of a session.
class ElfCache {
 public:
  absl::StatusOr<const ElfProbeFile*> Get(const std::string& path);

 private:
  std::map<FileId, std::unique_ptr<ElfProbeFile>> files_;
};

struct SpdkProcess {
  struct ProbeObject {
    std::string open_path;  // path this agent attaches through
    const ElfProbeFile* elf = nullptr;
  };
  ProcessInfo info;
  std::vector<ProbeObject> objects;  // mapped objects with the role's probes
};

class SpdkProcessFinder {
 public:
  // Checks every argument now: a PID must exist and map the role's probes, a BINARY must carry
  // them (itself or through the libraries it loads). Errors say which and what to do.
  static absl::StatusOr<std::unique_ptr<SpdkProcessFinder>> Create(
      SpdkRole role, const std::vector<std::string>& args);

  SpdkRole role() const { return role_; }
  const std::vector<SpdkTargetSpec>& specs() const { return specs_; }

  // The processes that match the arguments, except those in skip (pid -> start time seen).
  std::vector<pid_t> MatchingPids(const std::map<pid_t, uint64_t>& skip);
  // What one process offers; an error when it is gone or maps no object with the role's probes.
  absl::StatusOr<SpdkProcess> Inspect(pid_t pid);

 private:
  SpdkProcessFinder(SpdkRole role) : role_(role) {}
  absl::StatusOr<SpdkTargetSpec> ParseArg(const std::string& arg);
  bool HasRoleProbes(const ElfProbeFile& f) const;

  SpdkRole role_;
  std::vector<SpdkTargetSpec> specs_;
  ElfCache elf_;
};

}  // namespace ntprof::agent::spdk
