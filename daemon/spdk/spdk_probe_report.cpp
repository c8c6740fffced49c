#include "spdk_probe_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "probe_control.h"

namespace ntprof::agent::spdk {
namespace {

void DescribeObject(const ElfProbeFile& f, std::string* out) {
  absl::StrAppend(out, "  ", f.path(), "\n");
  for (const UsdtSite& s : f.ntprof_sites()) {
    absl::StrAppendFormat(out, "    %s:%s at 0x%x, %d args%s\n", s.provider, s.name, s.address,
                          s.arg_count(),
                          s.arg_count() < NTPROF_PROBE_ARGS_V1 ? " (fewer than the contract's 11!)" : "");
  }
  if (f.control_address()) {
    absl::StrAppendFormat(out, "    %s at 0x%x\n", NTPROF_PROBE_CONTROL_SYMBOL, *f.control_address());
  } else {
    absl::StrAppend(out, "    ", NTPROF_PROBE_CONTROL_SYMBOL,
                    " NOT FOUND: the agent cannot switch sampling on (stripped? docs/spdk.md)\n");
  }
}

}  // namespace

absl::StatusOr<std::string> DescribeSpdkProbes(SpdkRole role, const std::vector<std::string>& args) {
  auto finder = SpdkProcessFinder::Create(role, args);
  if (!finder.ok()) return finder.status();
  std::string out;
  ElfCache elf;
  for (const SpdkTargetSpec& s : (*finder)->specs()) {
    if (s.pid) continue;
    absl::StrAppend(&out, SpdkRoleFlag(role), " ", s.arg, ": ", s.binary, "\n");
    if (!s.unresolved_libraries.empty()) absl::StrAppend(&out, "    note: ", UnresolvedLibrariesNote(s), "\n");
    for (const std::string& obj : s.probe_objects) {
      auto f = elf.Get(obj);
      if (f.ok()) DescribeObject(**f, &out);
    }
  }
  std::map<pid_t, uint64_t> none;
  const std::vector<pid_t> pids = (*finder)->MatchingPids(none);
  absl::StrAppend(&out, "running processes: ", pids.empty() ? "none" : "", "\n");
  for (pid_t pid : pids) {
    auto p = (*finder)->Inspect(pid);
    if (!p.ok()) {
      absl::StrAppend(&out, "  ", pid, ": ", p.status().message(), "\n");
      continue;
    }
    std::vector<const ElfProbeFile*> objects;
    for (const auto& o : p->objects) objects.push_back(o.elf);
    std::vector<std::string> problems;
    std::vector<ControlBlock> blocks = LocateControlBlocks(p->info, objects, &problems);
    absl::StrAppend(&out, "  ", pid, " (", p->info.comm, ")");
    for (const ControlBlock& b : blocks) {
      auto c = ReadControl(pid, b);
      if (c.ok()) {
        absl::StrAppendFormat(&out, " (sampling variable at 0x%x: rate %u, contract v%u, clock %u Hz)",
                              b.address, c->sample_rate, c->version, c->clock_hz);
      } else {
        absl::StrAppend(&out, " (", c.status().message(), ")");
      }
    }
    absl::StrAppend(&out, "\n");
    for (const auto& o : p->objects) {
      absl::StrAppend(&out, "    maps ", o.open_path, " (", o.elf->ntprof_sites().size(), " ntprof probe sites)\n");
    }
    for (const std::string& problem : problems) absl::StrAppend(&out, "    note: ", problem, "\n");
  }
  return out;
}

}  // namespace ntprof::agent::spdk
