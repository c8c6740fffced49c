// The whole ntprofctl command line: the program's flags and every verb with its flags, help and
// callback. main() parses with it; a test parses every command line the docs show with it.
#pragma once

#include <CLI/CLI.hpp>

namespace ntprof::cli {

// A verb's callback leaves its exit status in *exit_code.
void DefineNtprofctl(CLI::App& app, int* exit_code);

}  // namespace ntprof::cli
