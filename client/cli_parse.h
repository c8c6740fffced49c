// Parses an ntprof command line the same way in every binary: --help and --version exit 0; a
// parse error prints the usage of the verb being parsed (or of the program) and what was wrong on
// stderr and returns bad_input_code. Otherwise returns what the verb's callback left in exit_code.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

namespace ntprof::cli {

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
    const auto parsed = app.get_subcommands();
    std::cerr << (parsed.empty() ? app.help() : parsed.back()->help());
    std::cerr << program << ": " << e.what() << "\n";
    return bad_input_code;
  }
  return exit_code;
}

}  // namespace ntprof::cli
