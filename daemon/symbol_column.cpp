#include "symbol_column.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace ntprof::agent {
namespace {

// The whole file: /proc and tracefs files have no size to stat, so read until the end.
std::string ReadAll(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  // seq_file listings hand out about a page per read, whatever the buffer
  char chunk[1 << 16];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof(chunk))) > 0) text.append(chunk, static_cast<size_t>(n));
  close(fd);
  return text;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

}  // namespace

SymbolColumn SymbolColumn::Read(const std::string& path, int column) {
  SymbolColumn out;
  out.text_ = std::make_unique<const std::string>(ReadAll(path));
  out.names_.reserve(out.text_->size() / 32);
  const char* p = out.text_->data();
  const char* end = p + out.text_->size();
  while (p < end) {
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (!eol) eol = end;
    // skip to field `column`
    const char* f = p;
    for (int i = 0;; ++i) {
      while (f < eol && IsSpace(*f)) ++f;
      const char* fe = f;
      while (fe < eol && !IsSpace(*fe)) ++fe;
      if (f == fe) break;  // the line has fewer fields
      if (i == column) {
        out.names_.emplace(f, static_cast<size_t>(fe - f));
        break;
      }
      f = fe;
    }
    p = eol + 1;
  }
  return out;
}

std::string_view SymbolColumn::LineOf(std::string_view name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return {};
  // the name is a view into text_: its line runs from the newline before it to the one after
  const char* begin = it->data();
  while (begin > text_->data() && begin[-1] != '\n') --begin;
  const char* end = it->data() + it->size();
  const char* text_end = text_->data() + text_->size();
  while (end < text_end && *end != '\n') ++end;
  return std::string_view(begin, static_cast<size_t>(end - begin));
}

}  // namespace ntprof::agent
