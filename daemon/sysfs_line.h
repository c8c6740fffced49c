// The first line of a sysfs or configfs attribute, without surrounding white space ("" when the
// file cannot be read: the object went away while it was being listed).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"

namespace ntprof::agent {

inline std::string ReadSysfsLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace ntprof::agent
