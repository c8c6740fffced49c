// A directory that exists for one test and is removed afterwards.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace ntprof::testing {

class TempDir {
 public:
  // A new, empty directory that no other process has: mkdtemp creates it under a name nobody
  // holds, where a name made of the pid could be a leftover of a killed run whose pid came back
  // (its files read as this test's) or be removed under another test still using it.
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "ntprof-test-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + name);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ntprof::testing
