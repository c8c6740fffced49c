// The -o flag shared by the verbs that print reports.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ntprof::cli {

inline CLI::Option* AddOutputFlag(CLI::App* cmd, std::string* format) {
  return cmd->add_option("-o,--output", *format, "Output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
}

}  // namespace ntprof::cli
