// One byte of a JSON string's text, as object keys and string values read
// it: valid UTF-8 only, no raw control characters, escapes without lone
// surrogates, lengths in code points. Private to src/grammar.
#pragma once

#include <glmrt/grammar/json_machine.h>

#include <cstdint>

namespace glmrt::grammar {

enum StringPhase : uint8_t { kStringBody, kStringEscape, kStringUnicode };

enum class StringStep { rejected, more, closed };

/// Steps `f` (a string frame after its opening quote) by `b`: `closed` for
/// the closing quote (only after `min_length` code points), `rejected` for
/// anything JSON or the bounds refuse (a character past `max_length`).
StringStep string_byte(Frame& f, uint8_t b, uint32_t min_length, uint32_t max_length);

}  // namespace glmrt::grammar
