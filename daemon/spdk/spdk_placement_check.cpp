#include "spdk_placement_check.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "elf_probe_file.h"
#include "spdk_placement_contract.h"

namespace ntprof::agent::spdk {
namespace {

constexpr int kUnknownSlot = -2;  // a stamp whose slot is not a constant at the call site
constexpr const char* kReapply =
    "re-apply the patch to a clean tree with `patch -p1 -F0` and port each rejected hunk (.rej) "
    "by hand into the function named (docs/spdk.md)";

// A note found in an object: a stamp (slot) or a done probe (probe name).
struct FoundSite {
  const ElfProbeFile* object = nullptr;
  uint64_t address = 0;
  int slot = PlacementRule::kDoneProbe;
  std::string probe;     // done probes
  std::string args;      // the note's argument string
  std::string function;  // source name of the containing function, "?" if none
};

// "4@$5" (an immediate: the slot was a constant where the stamp was inlined) -> 5.
std::optional<int> ConstantSlot(const std::string& args) {
  const size_t at = args.find("@$");
  int slot = 0;
  if (at == std::string::npos || !absl::SimpleAtoi(args.substr(at + 2), &slot)) return std::nullopt;
  return slot;
}

// GCC's split parts and clones keep the source name before the first dot: nvmf_tcp_req_process.cold
// (the unlikely branch - where the sampled-only stamps are), foo.isra.0, foo.part.0, foo.constprop.0.
std::string SourceFunctionName(const std::string& symbol) { return symbol.substr(0, symbol.find('.')); }

bool SameKey(const PlacementRule& r, const FoundSite& s) {
  if (s.slot == PlacementRule::kDoneProbe) return r.slot == PlacementRule::kDoneProbe && r.label == s.probe;
  return r.slot == s.slot;
}

bool Holds(const PlacementRule& r, const std::string& function) {
  return r.function == function ||
         std::find(r.inline_hosts.begin(), r.inline_hosts.end(), function) != r.inline_hosts.end();
}

std::string RoleName(SpdkRole role) { return role == SpdkRole::kTarget ? "target" : "host"; }

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// "SPDK v23.01.1" as SPDK_VERSION_STRING puts it in lib/nvmf/ctrlr.c, lib/env_dpdk/init.c ...
std::optional<std::string> VersionStringIn(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string kPrefix = "SPDK v";
  for (size_t at = bytes.find(kPrefix); at != std::string::npos; at = bytes.find(kPrefix, at + 1)) {
    size_t end = at + kPrefix.size();
    while (end < bytes.size() && (isdigit(static_cast<unsigned char>(bytes[end])) || bytes[end] == '.')) ++end;
    std::string version = bytes.substr(at + kPrefix.size() - 1, end - at - kPrefix.size() + 1);
    while (!version.empty() && version.back() == '.') version.pop_back();
    if (version.size() > 1 && isdigit(static_cast<unsigned char>(version[1]))) return version;
  }
  return std::nullopt;
}

std::string ExpectedList(const std::vector<const PlacementRule*>& rules) {
  std::vector<std::string> parts;
  for (const PlacementRule* r : rules) {
    std::string p = absl::StrCat(r->function, " (", r->file, ")");
    if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
  }
  return parts.empty() ? "no function (the contract has no such stamp)" : absl::StrJoin(parts, " or ");
}

}  // namespace

absl::StatusOr<PlacementReport> CheckPlacement(SpdkRole role, const std::string& binary,
                                               const std::string& version) {
  auto bin = ElfProbeFile::Open(binary, ElfProbeFile::Symbols::kFunctions);
  if (!bin.ok()) return bin.status();
  const NeededLibraries needed = ResolveNeededLibraries(*bin);

  PlacementReport report;
  report.role = role;
  std::vector<ElfProbeFile> objects;
  objects.reserve(needed.found.size() + 1);
  if (bin->has_ntprof_probes() || !bin->stamp_sites().empty()) objects.push_back(std::move(*bin));
  for (const std::string& lib : needed.found) {
    auto f = ElfProbeFile::Open(lib);
    if (!f.ok() || (!f->has_ntprof_probes() && f->stamp_sites().empty())) continue;
    auto with_functions = ElfProbeFile::Open(lib, ElfProbeFile::Symbols::kFunctions);
    if (with_functions.ok()) objects.push_back(std::move(*with_functions));
  }
  if (objects.empty()) {
    return absl::NotFoundError(absl::StrCat(
        binary, " and the ", needed.found.size(), " libraries it needs hold no ntprof notes",
        needed.unresolved.empty() ? "" : absl::StrCat(" (not found: ", absl::StrJoin(needed.unresolved, ", "),
                                                      "; set LD_LIBRARY_PATH as the binary runs)"),
        ": build SPDK with deploy/spdk/<version>/ntprof-probes.patch applied (docs/spdk.md)"));
  }

  report.version = version;
  report.version_source = "--spdk-version";
  if (version.empty()) {
    std::vector<std::string> candidates{binary};
    for (const std::string& lib : needed.found) {
      if (Basename(lib).rfind("libspdk_", 0) == 0) candidates.push_back(lib);
    }
    for (const std::string& c : candidates) {
      if (auto v = VersionStringIn(c)) {
        report.version = *v;
        report.version_source = c;
        break;
      }
    }
    if (report.version.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot tell the SPDK version of ", binary, " (no \"SPDK v...\" string in it or its libspdk_* "
          "libraries): pass --spdk-version (contracts: ", KnownPlacementVersions(), ")"));
    }
  }
  const PlacementContract* contract = FindPlacementContract(report.version);
  if (!contract || contract->rules.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no placement contract for SPDK ", report.version, " (from ", report.version_source,
        "); contracts: ", KnownPlacementVersions(),
        ". A port adds its functions to daemon/spdk/spdk_placement_contract.cpp"));
  }
  report.version = std::string(contract->version);

  std::vector<FoundSite> found;
  for (const ElfProbeFile& obj : objects) {
    report.objects.push_back(obj.path());
    if (!obj.has_symtab()) {
      return absl::FailedPreconditionError(absl::StrCat(
          obj.path(), " has no symbol table (.symtab: stripped?), so the static functions that hold "
          "the stamps have no names: check the unstripped build (SPDK's build/lib and build/bin)"));
    }
    auto add = [&](const UsdtSite& note, int slot, std::string probe) {
      const FunctionSymbol* fn = obj.FunctionContaining(note.address);
      found.push_back({&obj, note.address, slot, std::move(probe), note.args,
                       fn ? SourceFunctionName(fn->name) : "?"});
    };
    for (const UsdtSite& s : obj.ntprof_sites()) add(s, PlacementRule::kDoneProbe, s.name);
    for (const UsdtSite& s : obj.stamp_sites()) add(s, ConstantSlot(s.args).value_or(kUnknownSlot), "");
  }

  // Sites per (key, object, function): more than the rules holding that function allow is doubled.
  std::map<std::tuple<int, std::string, const ElfProbeFile*, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < found.size(); ++i) {
    const FoundSite& s = found[i];
    groups[{s.slot, s.probe, s.object, s.function}].push_back(i);
  }
  for (const auto& [key, indices] : groups) {
    const FoundSite& s = found[indices.front()];
    std::vector<const PlacementRule*> same_key, holding, role_key;
    int allowed = 0;
    for (const PlacementRule& r : contract->rules) {
      if (!SameKey(r, s)) continue;
      same_key.push_back(&r);
      if (r.role == role) role_key.push_back(&r);
      if (Holds(r, s.function)) {
        holding.push_back(&r);
        allowed += r.sites;
      }
    }
    const std::vector<const PlacementRule*>& expected = role_key.empty() ? same_key : role_key;
    // The rule naming this very function, else one that lets it inline here (the same static name
    // can exist in two files: request_transfer_out is in tcp.c and in rdma.c).
    const PlacementRule* best = holding.empty() ? nullptr : holding.front();
    for (const PlacementRule* r : holding) {
      if (r->function == s.function) best = r;
    }
    std::string label = s.slot == PlacementRule::kDoneProbe ? s.probe
                        : s.slot == kUnknownSlot            ? "stamp"
                        : best                              ? std::string(best->label)
                        : !expected.empty()                 ? std::string(expected.front()->label)
                                                            : absl::StrCat("slot ", s.slot);
    std::string verdict;
    const std::string where = absl::StrFormat("%s of %s", s.function, Basename(s.object->path()));
    if (s.slot == kUnknownSlot) {
      verdict = "UNKNOWN SLOT";
      report.problems.push_back(absl::StrCat(
          "UNKNOWN SLOT: a stamp in ", where, " takes its slot at run time (note argument \"", s.args,
          "\"), so the check cannot tell which stamp it is: call ntprof_probe_stamp() once per slot, "
          "with the slot as a constant"));
    } else if (holding.empty()) {
      verdict = "MISPLACED";
      report.problems.push_back(absl::StrCat(
          "MISPLACED ", label, ": found in ", where, ", the contract (SPDK ", report.version,
          ") expects ", ExpectedList(expected), ": the hunk applied in the wrong function; ", kReapply));
    } else if (static_cast<int>(indices.size()) > allowed) {
      verdict = "DOUBLED";
      report.problems.push_back(absl::StrCat(
          "DOUBLED ", label, ": ", indices.size(), " sites in ", where, ", the contract expects ", allowed,
          " in ", ExpectedList(holding), ": a hunk applied twice or in two places; ", kReapply));
    } else {
      verdict = best->function == s.function ? "in place" : "inlined into a caller";
    }
    for (size_t i : indices) {
      report.sites.push_back({found[i].object->path(), found[i].address, label, found[i].function,
                              best ? std::string(best->function) : ExpectedList(expected), verdict});
    }
  }

  for (const PlacementRule& r : contract->rules) {
    if (r.role != role) continue;
    const bool present = std::any_of(found.begin(), found.end(), [&](const FoundSite& s) {
      return SameKey(r, s) && Holds(r, s.function);
    });
    if (present) continue;
    report.problems.push_back(absl::StrCat(
        "MISSING ", r.label, ": no site in ", r.function,
        r.inline_hosts.empty() ? "" : absl::StrCat(" (or a caller it is inlined into: ", absl::StrJoin(r.inline_hosts, ", "), ")"),
        " of ", r.file, " (NVMe/", r.transport == "tcp" ? "TCP" : "RDMA",
        "): its hunk did not apply or was dropped; ", kReapply));
  }
  std::sort(report.sites.begin(), report.sites.end(), [](const PlacementSite& a, const PlacementSite& b) {
    return std::tie(a.object, a.address) < std::tie(b.object, b.address);
  });
  return report;
}

std::string PlacementReport::ToText() const {
  std::string out = absl::StrCat("SPDK ", version, " (", version_source == "--spdk-version" ? "" : "version string in ",
                                 version_source, "), ", RoleName(role), " contract\n");
  std::string object;
  for (const PlacementSite& s : sites) {
    if (s.object != object) {
      object = s.object;
      absl::StrAppendFormat(&out, "  %s\n    %-20s %-10s %-40s %-40s %s\n", object, "stamp/probe",
                            "address", "function found", "contract", "verdict");
    }
    absl::StrAppendFormat(&out, "    %-20s 0x%-8x %-40s %-40s %s\n", s.label, s.address, s.function,
                          s.expected, s.verdict);
  }
  if (ok()) {
    absl::StrAppend(&out, "placement: all ", sites.size(), " sites where the ", version, " contract puts them\n");
  } else {
    absl::StrAppend(&out, "placement: ", problems.size(), problems.size() == 1 ? " problem" : " problems", "\n");
  }
  return out;
}

std::string PlacementReport::ToJson() const {
  nlohmann::json j = {{"spdk_version", version}, {"version_source", version_source},
                      {"role", RoleName(role)},  {"ok", ok()},
                      {"objects", objects},      {"problems", problems}};
  j["sites"] = nlohmann::json::array();
  for (const PlacementSite& s : sites) {
    j["sites"].push_back({{"object", s.object}, {"address", s.address}, {"stamp", s.label},
                          {"function", s.function}, {"expected", s.expected}, {"verdict", s.verdict}});
  }
  return j.dump(2) + "\n";
}

}  // namespace ntprof::agent::spdk
