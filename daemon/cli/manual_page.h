// ntprofd's commands describe themselves like man pages (NAME, SYNOPSIS, DESCRIPTION) at the top
// of their own --help, while `ntprofd --help` lists each with a one-line summary. CLI11 prints a
// subcommand's description in both places, so the page lives in the command's formatter instead.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <utility>

namespace ntprof::daemon_cli {

class ManualPageFormatter : public CLI::Formatter {
 public:
  explicit ManualPageFormatter(std::string page) : page_(std::move(page)) {}
  std::string make_description(const CLI::App*) const override { return page_ + "\n"; }

 private:
  std::string page_;
};

// `page` heads cmd's own --help; the summary given to add_subcommand stays the parent's list line.
inline void SetManualPage(CLI::App* cmd, std::string page) {
  cmd->formatter(std::make_shared<ManualPageFormatter>(std::move(page)));
}

}  // namespace ntprof::daemon_cli
