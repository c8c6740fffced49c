#include "elf_probe_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ntprof_probe_abi.h"

namespace ntprof::agent::spdk {
namespace {

constexpr uint32_t kNtStapsdt = 3;  // note type of SystemTap SDT probe descriptors

// Closes the fd and the Elf handle on every path out of Open.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

std::string ReadCString(const char* data, size_t size, size_t* pos) {
  size_t start = *pos;
  while (*pos < size && data[*pos] != '\0') ++*pos;
  std::string s(data + start, *pos - start);
  ++*pos;  // the NUL
  return s;
}

}  // namespace

int UsdtSite::arg_count() const {
  int n = 0;
  for (absl::string_view a : absl::StrSplit(args, ' ', absl::SkipEmpty())) {
    (void)a;
    ++n;
  }
  return n;
}

absl::StatusOr<FileId> FileIdOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return absl::NotFoundError(absl::StrCat(path, ": ", strerror(errno)));
  return FileId{st.st_dev, st.st_ino};
}

absl::StatusOr<ElfProbeFile> ElfProbeFile::Open(const std::string& path, Symbols symbols) {
  if (elf_version(EV_CURRENT) == EV_NONE) return absl::InternalError("libelf: version mismatch");
  ElfProbeFile f;
  f.path_ = path;
  auto id = FileIdOf(path);
  if (!id.ok()) return id.status();
  f.id_ = *id;

  ElfHandle h;
  h.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (h.fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  h.elf = elf_begin(h.fd, ELF_C_READ, nullptr);
  if (!h.elf || elf_kind(h.elf) != ELF_K_ELF)
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ELF executable or library"));
  if (gelf_getclass(h.elf) != ELFCLASS64)
    return absl::InvalidArgumentError(absl::StrCat(path, ": only 64-bit ELF objects are supported"));

  size_t phnum = 0;
  elf_getphdrnum(h.elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(h.elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      f.segments_.push_back({ph.p_vaddr, ph.p_filesz, ph.p_offset});
  }

  size_t shstrndx = 0;
  elf_getshdrstrndx(h.elf, &shstrndx);
  // .stapsdt.base: where the linker put it vs. where the note says it is (prelink moves code).
  std::optional<uint64_t> stapsdt_base;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(h.elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(h.elf, shstrndx, sh.sh_name);
    if (name && std::strcmp(name, ".stapsdt.base") == 0) stapsdt_base = sh.sh_addr;
  }

  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(h.elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(h.elf, shstrndx, sh.sh_name);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) continue;

    if (sh.sh_type == SHT_NOTE && name && std::strcmp(name, ".note.stapsdt") == 0) {
      size_t off = 0, name_off = 0, desc_off = 0;
      GElf_Nhdr nh;
      while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char* base = static_cast<const char*>(data->d_buf);
        if (nh.n_type != kNtStapsdt || nh.n_descsz < 3 * sizeof(uint64_t)) continue;
        if (std::strncmp(base + name_off, "stapsdt", nh.n_namesz) != 0) continue;
        const char* desc = base + desc_off;
        uint64_t pc, note_base;
        std::memcpy(&pc, desc, 8);
        std::memcpy(&note_base, desc + 8, 8);
        size_t pos = 3 * sizeof(uint64_t);
        UsdtSite site;
        site.provider = ReadCString(desc, nh.n_descsz, &pos);
        site.name = ReadCString(desc, nh.n_descsz, &pos);
        site.args = ReadCString(desc, nh.n_descsz, &pos);
        site.address = stapsdt_base ? pc + (*stapsdt_base - note_base) : pc;
        if (site.provider == NTPROF_PROBE_PROVIDER) {
          f.sites_.push_back(std::move(site));
        } else if (site.provider == NTPROF_PROBE_STAMP_PROVIDER) {
          f.stamp_sites_.push_back(std::move(site));
        }
      }
    } else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
      const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      const bool functions = symbols == Symbols::kFunctions;
      if (functions && sh.sh_type == SHT_SYMTAB) f.has_symtab_ = true;
      for (size_t i = 0; i < count && (functions || !(f.control_vaddr_ && f.probe_library_)); ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
        const char* sname = elf_strptr(h.elf, sh.sh_link, sym.st_name);
        if (!sname) continue;
        if (functions && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0)
          f.functions_.push_back({sym.st_value, sym.st_size, sname});
        if (std::strcmp(sname, NTPROF_PROBE_CONTROL_SYMBOL) == 0) f.control_vaddr_ = sym.st_value;
        // ntprof_lib_done: probe/ntprof_probe_lib.h
        if (std::strcmp(sname, "ntprof_lib_done") == 0) f.probe_library_ = true;
      }
    } else if (sh.sh_type == SHT_DYNAMIC) {
      const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; i < count; ++i) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) continue;
        if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) continue;
        const char* s = elf_strptr(h.elf, sh.sh_link, dyn.d_un.d_val);
        if (!s) continue;
        if (dyn.d_tag == DT_NEEDED) {
          f.needed_.push_back(s);
        } else {
          for (absl::string_view dir : absl::StrSplit(s, ':', absl::SkipEmpty()))
            f.runpath_.emplace_back(dir);
        }
      }
    }
  }
  return f;
}

const FunctionSymbol* ElfProbeFile::FunctionContaining(uint64_t vaddr) const {
  // A linear scan: the check asks once per site, a few dozen times per object.
  for (const FunctionSymbol& fn : functions_) {
    if (vaddr >= fn.address && vaddr - fn.address < fn.size) return &fn;
  }
  return nullptr;
}

std::optional<uint64_t> ElfProbeFile::FileOffsetOf(uint64_t vaddr) const {
  for (const LoadSegment& s : segments_) {
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz) return vaddr - s.vaddr + s.offset;
  }
  return std::nullopt;  // not file-backed (.bss) or outside every segment
}

namespace {

std::vector<std::string> LdSoConfDirs(const std::string& conf, int depth = 0) {
  std::vector<std::string> dirs;
  std::ifstream in(conf);
  std::string line;
  while (depth < 4 && std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    if (line.rfind("include", 0) == 0) {
      std::string pattern = line.substr(7);
      pattern.erase(0, pattern.find_first_not_of(" \t"));
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          for (auto& d : LdSoConfDirs(g.gl_pathv[i], depth + 1)) dirs.push_back(d);
        }
      }
      globfree(&g);
    } else {
      dirs.push_back(line);
    }
  }
  return dirs;
}

}  // namespace

NeededLibraries ResolveNeededLibraries(const ElfProbeFile& binary) {
  namespace fs = std::filesystem;
  std::vector<std::string> system_dirs;
  if (const char* env = getenv("LD_LIBRARY_PATH")) {
    for (absl::string_view d : absl::StrSplit(env, ':', absl::SkipEmpty())) system_dirs.emplace_back(d);
  }
  for (auto& d : LdSoConfDirs("/etc/ld.so.conf")) system_dirs.push_back(d);
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) system_dirs.emplace_back(d);

  NeededLibraries result;
  std::set<std::string> seen;
  std::vector<const ElfProbeFile*> queue{&binary};
  std::vector<ElfProbeFile> opened;
  opened.reserve(256);  // pointers into it stay valid
  for (size_t q = 0; q < queue.size() && opened.size() < 256; ++q) {
    const ElfProbeFile& obj = *queue[q];
    const std::string origin = fs::path(obj.path()).parent_path().string();
    std::vector<std::string> dirs;
    for (std::string d : obj.runpath()) {
      if (auto p = d.find("$ORIGIN"); p != std::string::npos) d.replace(p, 7, origin);
      dirs.push_back(d);
    }
    dirs.insert(dirs.end(), system_dirs.begin(), system_dirs.end());
    for (const std::string& name : obj.needed()) {
      if (seen.count(name)) continue;
      seen.insert(name);
      bool found = false;
      for (const std::string& dir : dirs) {
        std::string candidate = (fs::path(dir) / name).string();
        if (!fs::exists(candidate)) continue;
        auto lib = ElfProbeFile::Open(candidate);
        if (!lib.ok()) continue;
        result.found.push_back(candidate);
        opened.push_back(std::move(*lib));
        queue.push_back(&opened.back());
        found = true;
        break;
      }
      if (!found) result.unresolved.push_back(name);
    }
  }
  return result;
}

}  // namespace ntprof::agent::spdk
