// ElfProbeFile: what an ELF object (executable or shared library) offers under the ntprof probe
// contract: its `ntprof` USDT probe sites (.note.stapsdt), where its ntprof_probe_control lives
// (symbol table), how its file maps into memory (PT_LOAD) and which libraries it needs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ntprof::agent::spdk {

// A file's identity, independent of the path it was reached by (symlinks, mount namespaces).
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
  auto operator<=>(const FileId&) const = default;
};
absl::StatusOr<FileId> FileIdOf(const std::string& path);

struct UsdtSite {
  std::string provider;  // "ntprof"
  std::string name;      // "nvmf_tcp_done"
  uint64_t address = 0;  // virtual address in the file (prelink-adjusted)
  std::string args;      // the note's argument string, e.g. "8@%rbx -8@%r12 ..."
  int arg_count() const;
};

// A function symbol (STT_FUNC) of .symtab or .dynsym: [address, address + size).
struct FunctionSymbol {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string name;
};

class ElfProbeFile {
 public:
  enum class Symbols { kProbeOnly, kFunctions };
  // Reads the file's notes, symbols, segments and dynamic section. kFunctions also keeps every
  // function symbol (the placement check names the function holding each site; the recorder
  // does not need them, and a large library has tens of thousands).
  static absl::StatusOr<ElfProbeFile> Open(const std::string& path,
                                           Symbols symbols = Symbols::kProbeOnly);

  const std::string& path() const { return path_; }
  const FileId& id() const { return id_; }
  // Only the sites of the ntprof provider.
  const std::vector<UsdtSite>& ntprof_sites() const { return sites_; }
  bool has_ntprof_probes() const { return !sites_.empty(); }
  // The stamp-site notes (NTPROF_PROBE_STAMP_PROVIDER): one per ntprof_probe_stamp() call site.
  const std::vector<UsdtSite>& stamp_sites() const { return stamp_sites_; }
  // Opened with Symbols::kFunctions: the function whose [address, address + size) holds vaddr
  // (.symtab names static functions too). Null if none does.
  const FunctionSymbol* FunctionContaining(uint64_t vaddr) const;
  // Opened with Symbols::kFunctions: whether .symtab was there (without it static functions,
  // where most of SPDK's stamps sit, have no name).
  bool has_symtab() const { return has_symtab_; }
  // libntprof_probe.so (probe/), which any user-space stack loads, rather than a stack (SPDK)
  // with the contract compiled in: it defines the library's entry points.
  bool is_probe_library() const { return probe_library_; }
  // Virtual address (st_value) of ntprof_probe_control, if the symbol is in .symtab or .dynsym.
  std::optional<uint64_t> control_address() const { return control_vaddr_; }
  // File offset that holds virtual address vaddr (through the PT_LOAD segment containing it).
  std::optional<uint64_t> FileOffsetOf(uint64_t vaddr) const;
  const std::vector<std::string>& needed() const { return needed_; }   // DT_NEEDED
  const std::vector<std::string>& runpath() const { return runpath_; } // DT_RUNPATH / DT_RPATH

 private:
  struct LoadSegment {
    uint64_t vaddr, filesz, offset;
  };
  std::string path_;
  FileId id_;
  std::vector<UsdtSite> sites_;
  std::vector<UsdtSite> stamp_sites_;
  std::vector<FunctionSymbol> functions_;
  bool has_symtab_ = false;
  std::optional<uint64_t> control_vaddr_;
  bool probe_library_ = false;
  std::vector<LoadSegment> segments_;
  std::vector<std::string> needed_;
  std::vector<std::string> runpath_;
};

// The shared libraries a binary would load (DT_NEEDED, transitively), resolved the way the dynamic
// loader does for the common cases: DT_RPATH/DT_RUNPATH ($ORIGIN expanded), this process's
// LD_LIBRARY_PATH, /etc/ld.so.conf(.d), then the default directories. Names found nowhere are
// listed apart: the process that runs the binary may find them through its own LD_LIBRARY_PATH.
struct NeededLibraries {
  std::vector<std::string> found;       // paths
  std::vector<std::string> unresolved;  // DT_NEEDED names
};
NeededLibraries ResolveNeededLibraries(const ElfProbeFile& binary);

}  // namespace ntprof::agent::spdk
