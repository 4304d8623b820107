#include <glmrt/base/error.h>
#include <glmrt/sampling/sampling_limits.h>

namespace glmrt {

double sampling_value(const SamplingParams& p, SamplingSetting setting) {
  using S = SamplingSetting;
  switch (setting) {
    case S::temperature:
      return p.temperature;
    case S::top_k:
      return p.top_k;
    case S::top_p:
      return p.top_p;
    case S::min_p:
      return p.min_p;
    case S::repetition_penalty:
      return p.repetition_penalty;
    case S::presence_penalty:
      return p.presence_penalty;
    case S::frequency_penalty:
      return p.frequency_penalty;
    case S::max_new_tokens:
      return p.max_new_tokens;
  }
  fail("sampling: unknown setting {}", static_cast<int>(setting));
}

void check_sampling_params(const SamplingParams& params, std::string_view where) {
  for (const SamplingRange& range : sampling_ranges())
    if (auto error = sampling_value_error(range.setting, sampling_value(params, range.setting)))
      fail("{}: key `{}`: {}", where, range.key, *error);
}

}  // namespace glmrt
