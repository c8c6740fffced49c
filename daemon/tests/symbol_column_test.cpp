#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "kernel_facts.h"
#include "symbol_column.h"

namespace ntprof::agent {
namespace {

namespace fs = std::filesystem;

fs::path WriteListing(const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("ntprof-symbols-" + std::to_string(::getpid()));
  std::ofstream(p) << text;
  return p;
}

TEST_CASE("a column of a symbol listing, with module names, tabs, short lines and no last newline",
          "[symbols]") {
  fs::path p = WriteListing(
      "ffffffff81000000 T _stext\n"
      "ffffffffc0a01230 t nvme_tcp_recv_skb\t[nvme_tcp]\n"
      "ffffffff81200000 T  vfs_read\n"
      "short line\n"
      "\n"
      "ffffffff81300000 t skb_copy_bits");
  SymbolColumn kallsyms = SymbolColumn::Read(p, 2);
  CHECK(kallsyms.size() == 4);
  CHECK(kallsyms.Contains("_stext"));
  CHECK(kallsyms.Contains("nvme_tcp_recv_skb"));
  CHECK(kallsyms.Contains("vfs_read"));
  CHECK(kallsyms.Contains("skb_copy_bits"));
  CHECK_FALSE(kallsyms.Contains("[nvme_tcp]"));
  CHECK_FALSE(kallsyms.Contains("line"));
  CHECK(kallsyms.LineOf("_stext") == "ffffffff81000000 T _stext");
  CHECK(kallsyms.LineOf("nvme_tcp_recv_skb") == "ffffffffc0a01230 t nvme_tcp_recv_skb\t[nvme_tcp]");
  CHECK(kallsyms.LineOf("skb_copy_bits") == "ffffffff81300000 t skb_copy_bits");
  CHECK(kallsyms.LineOf("absent").empty());

  SymbolColumn first = SymbolColumn::Read(p, 0);
  CHECK(first.Contains("short"));
  CHECK(first.Contains("ffffffff81300000"));
  fs::remove(p);
}

// The agent keeps the column in a std::optional: a listing shorter than std::string's inline buffer
// must survive that move too.
TEST_CASE("a short listing moved into a cache still finds its names", "[symbols]") {
  fs::path p = WriteListing("1 T ab\n");
  std::optional<SymbolColumn> cached;
  cached = SymbolColumn::Read(p, 2);
  SymbolColumn moved = std::move(*cached);
  CHECK(moved.Contains("ab"));
  CHECK(moved.LineOf("ab") == "1 T ab");
  fs::remove(p);
}

TEST_CASE("a listing that cannot be read is empty", "[symbols]") {
  SymbolColumn none = SymbolColumn::Read("/nonexistent/ntprof/kallsyms", 2);
  CHECK(none.size() == 0);
  CHECK_FALSE(none.Contains("vfs_read"));
}

// The running kernel's own listing, against a line-by-line reading of the same file: the same
// names (a kallsyms that changes between the two reads, by a module load, is not expected here).
// The names of /proc/kallsyms, one line at a time (the slow reading SymbolColumn replaces).
std::set<std::string> KallsymsNamesLineByLine() {
  std::ifstream in("/proc/kallsyms");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string a, b, name;
    if (fields >> a >> b >> name) names.insert(name);
  }
  return names;
}

TEST_CASE("the running kernel's /proc/kallsyms gives the names a line-by-line reading gives",
          "[symbols]") {
  if (!std::ifstream("/proc/kallsyms")) {
    WARN("no /proc/kallsyms here");
    return;
  }
  // BPF programs loaded meanwhile (tests run in parallel) add and remove names: compare only
  // readings between which the kernel's list stayed the same.
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::set<std::string> expected = KallsymsNamesLineByLine();
    SymbolColumn kallsyms = SymbolColumn::Read("/proc/kallsyms", 2);
    if (KallsymsNamesLineByLine() != expected) continue;
    CHECK(kallsyms.size() == expected.size());
    size_t missing = 0;
    for (const std::string& name : expected) missing += kallsyms.Contains(name) ? 0 : 1;
    CHECK(missing == 0);
    CHECK(kallsyms.Contains("vfs_read"));
    return;
  }
  FAIL("/proc/kallsyms changed during every one of 5 readings");
}

// The address the agent hands the NVMe/TCP objects for page -> address: the one kallsyms lists.
TEST_CASE("the kernel's vmemmap_base address is the one kallsyms lists", "[symbols]") {
  LiveKernelFacts facts;
  std::ifstream in("/proc/kallsyms");
  std::string address, type, name;
  uint64_t listed = 0;
  while (in >> address >> type >> name) {
    if (name == "vmemmap_base") listed = std::strtoull(address.c_str(), nullptr, 16);
    in.ignore(1 << 20, '\n');
  }
  if (listed == 0) {
    WARN("vmemmap_base not listed or hidden here (kptr_restrict, not root)");
    return;
  }
  CHECK(facts.SymbolAddress("vmemmap_base") == listed);
  CHECK(facts.SymbolAddress("no_such_symbol_in_this_kernel") == 0);
}

}  // namespace
}  // namespace ntprof::agent
