// Parses an ntprof command line the same way in every binary: --help and --version exit 0; a
// parse error prints the usage of the verb being parsed (or of the program) and what was wrong on
// stderr and returns bad_input_code. Otherwise returns what the verb's callback left in exit_code.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace ntprof::cli {

// The verb a failed command line asked for when the program knows no such verb ("" otherwise):
// CLI11 then only says "A subcommand is required", which hides the typo.
inline std::string UnknownVerb(const CLI::App& app, int argc, char** argv) {
  if (!app.get_subcommands().empty()) return "";  // a verb was found: its own flags failed
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    return app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); }).empty()
               ? word
               : "";
  }
  return "";
}

inline std::string VerbList(const CLI::App& app) {
  std::string list;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  return list;
}

inline int ParseAndRun(CLI::App& app, int argc, char** argv, const std::string& program,
                       const int& exit_code, int bad_input_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (const std::string verb = UnknownVerb(app, argc, argv); !verb.empty()) {
      std::cerr << program << ": unknown command '" << verb << "'; the commands are "
                << VerbList(app) << " (`" << program << " --help` describes them)\n";
      return bad_input_code;
    }
    const auto parsed = app.get_subcommands();
    std::cerr << (parsed.empty() ? app.help() : parsed.back()->help());
    std::cerr << program << ": " << e.what() << "\n";
    return bad_input_code;
  }
  return exit_code;
}

}  // namespace ntprof::cli
