// The valid range of every sampling setting, in one place: the command-line
// flags, the profile's `generation:` section, generation_config.json and the
// Sampler itself all check values here, so a value refused in one is refused
// in all, and NaN (which passes every `<` and `>`) is refused everywhere.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace glmrt {
enum class SamplingSetting {
  temperature,
  top_k,
  top_p,
  min_p,
  repetition_penalty,
  presence_penalty,
  frequency_penalty,
  max_new_tokens,
};

struct SamplingRange {
  SamplingSetting setting;
  std::string_view key;   // profile and generation_config.json key, e.g. "top_p"
  std::string_view flag;  // command-line flag, e.g. "--top-p"
  double min, max;
  bool min_included, max_included;
  bool integer;
  /// "a number in (0, 1]", "an integer from 0 to 1073741824".
  std::string expected() const;
};

/// Every setting with a range, in declaration order.
std::span<const SamplingRange> sampling_ranges();
const SamplingRange& sampling_range(SamplingSetting setting);

/// Nothing when `value` is valid for `setting`, else what is wrong with it:
/// "nan is out of range: expected a number in (0, 1]".
std::optional<std::string> sampling_value_error(SamplingSetting setting, double value);

}  // namespace glmrt
