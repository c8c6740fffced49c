// One column of a kernel symbol listing (/proc/kallsyms, tracefs available_filter_functions) as a
// set of names. Loaded once per agent start, before any hook is planned: under emulation the
// listing's ~200,000 lines cost seconds with line-by-line stream parsing, so the file is read in
// one buffer and the names are views into it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

namespace ntprof::agent {

class SymbolColumn {
 public:
  // Field `column` (0-based, whitespace-separated) of every line of path; a missing or unreadable
  // file gives an empty set.
  static SymbolColumn Read(const std::string& path, int column);

  bool Contains(std::string_view name) const { return names_.count(name) > 0; }
  size_t size() const { return names_.size(); }
  // The whole line name came from (without its newline); "" when name is not in the column.
  std::string_view LineOf(std::string_view name) const;

  SymbolColumn(SymbolColumn&&) = default;
  SymbolColumn& operator=(SymbolColumn&&) = default;

 private:
  SymbolColumn() = default;
  // names_ views into *text_: on the heap, so a move of this object (into a cache) leaves the views
  // valid whatever the size (a moved short std::string would take its characters with it).
  std::unique_ptr<const std::string> text_;
  std::unordered_set<std::string_view> names_;
};

}  // namespace ntprof::agent
