// The check every unsigned number flag of ntprof uses (--salt, -s, -d, --count ...). CLI11 converts
// with strtoull, which reads "-5" as 2^64-5 and clamps 2^64 to 2^64-1 without a word: a salt given
// that way silently differs from the one meant, so host and target would sample different
// commands. This check runs before the conversion and refuses such text, naming the valid range
// (CLI11 prefixes the flag's name: "--salt: -5 is not a whole number from 0 to ...").
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

namespace ntprof::cli {

// Accepts what CLI11 then converts unchanged: digits in the base strtoull picks (decimal, 0x hex),
// no sign, no blanks, within [min, max]. T is the option's type; min must not be negative.
template <typename T>
CLI::Validator WholeNumber(T min = 0, T max = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T>, "WholeNumber checks integer flags");
  const auto low = static_cast<unsigned long long>(min);
  const auto high = static_cast<unsigned long long>(max);
  const std::string range = std::to_string(low) + " to " + std::to_string(high);
  // Help shows it after the type: "--salt UINT:[0 - 18446744073709551615]".
  const std::string help = "[" + std::to_string(low) + " - " + std::to_string(high) + "]";
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        const bool starts_with_digit =
            !text.empty() && std::isdigit(static_cast<unsigned char>(text[0]));
        char* end = nullptr;
        errno = 0;
        const unsigned long long value =
            starts_with_digit ? std::strtoull(text.c_str(), &end, 0) : 0;
        const bool whole = starts_with_digit && *end == '\0' && errno != ERANGE;
        if (whole && value >= low && value <= high) return {};
        return text + " is not a whole number from " + range;
      },
      help);
}

}  // namespace ntprof::cli
