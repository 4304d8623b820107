#include <glmrt/base/error.h>
#include <glmrt/base/number_text.h>
#include <glmrt/profile/sampling_ranges.h>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace glmrt {
namespace {

using S = SamplingSetting;

// Upper bounds keep the arithmetic meaningful: exp(Δlogit / temperature) and
// penalties of this size already saturate every real distribution. The
// frequency penalty shares the presence penalty's [-100, 100] rather than
// OpenAI's [-2, 2]: both subtract from a logit (one once per token, one once
// per occurrence), so both are held to the same bound; `glmrt serve` holds its
// requests to OpenAI's narrower range on top.
constexpr std::array<SamplingRange, 8> kRanges{{
    {S::temperature, "temperature", "--temperature", 0, 100, true, true, false},
    {S::top_k, "top_k", "--top-k", 0, 1 << 30, true, true, true},
    {S::top_p, "top_p", "--top-p", 0, 1, false, true, false},
    {S::min_p, "min_p", "--min-p", 0, 1, true, false, false},
    {S::repetition_penalty, "repetition_penalty", "--repetition-penalty", 0, 100, false, true,
     false},
    {S::presence_penalty, "presence_penalty", "--presence-penalty", -100, 100, true, true, false},
    {S::frequency_penalty, "frequency_penalty", "--frequency-penalty", -100, 100, true, true,
     false},
    {S::max_new_tokens, "max_new_tokens", "--max-new-tokens", 0, 1 << 20, true, true, true},
}};

}  // namespace

std::string SamplingRange::expected() const {
  if (integer) return fmt::format("an integer from {} to {}", number_text(min), number_text(max));
  return fmt::format("a number in {}{}, {}{}", min_included ? '[' : '(', number_text(min),
                     number_text(max), max_included ? ']' : ')');
}

std::span<const SamplingRange> sampling_ranges() {
  return kRanges;
}

const SamplingRange& sampling_range(SamplingSetting setting) {
  for (const SamplingRange& range : kRanges)
    if (range.setting == setting) return range;
  fail("sampling: unknown setting {}", static_cast<int>(setting));
}

std::optional<std::string> sampling_value_error(SamplingSetting setting, double value) {
  const SamplingRange& r = sampling_range(setting);
  // Written so that NaN fails every test: it compares false with everything.
  const bool above_min = r.min_included ? value >= r.min : value > r.min;
  const bool below_max = r.max_included ? value <= r.max : value < r.max;
  const bool whole = !r.integer || std::floor(value) == value;
  if (above_min && below_max && whole) return std::nullopt;
  return fmt::format("{} is out of range: expected {}", number_text(value), r.expected());
}

}  // namespace glmrt
