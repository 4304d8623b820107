// Unsigned values on the command line. boost's lexical_cast reads "-1" into an
// unsigned type by wrapping it (to 2^64-1 for --seed), so such flags are taken
// as text and parsed here.
#pragma once

#include <cstdint>
#include <string_view>

namespace glmrt::cli {

/// `text` as a whole number from 0 to 2^64-1. A sign ("-1", "+1"), a
/// fraction, spaces or anything but digits is a glmrt::Error naming `flag`.
uint64_t parse_unsigned_flag(std::string_view flag, std::string_view text);

}  // namespace glmrt::cli
