// Byte sizes as people write them in profiles: "20GiB", "512 MiB", "1.5GB", "0".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace glmrt {

/// Parses a size with a unit: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB,
/// GB, TB (powers of 1000); a space before the unit is allowed, the number may
/// have a fraction ("1.5GiB", rounded down to whole bytes). "0" alone is zero.
/// Throws glmrt::Error saying what was expected (the caller adds file and key).
uint64_t parse_byte_size(std::string_view text);

/// "20 GiB", "1.5 MiB", "512 B": the largest binary unit that keeps the number >= 1.
std::string format_byte_size(uint64_t bytes);

}  // namespace glmrt
