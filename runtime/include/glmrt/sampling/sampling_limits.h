// Sampling parameters checked against the ranges of profile/sampling_ranges.h.
#pragma once

#include <glmrt/profile/sampling_ranges.h>
#include <glmrt/sampling/sampler.h>

#include <string_view>

namespace glmrt {

/// The value of `setting` in `params` (integers widened to double).
double sampling_value(const SamplingParams& params, SamplingSetting setting);

/// Checks every setting of `params`; throws glmrt::Error "WHERE: key `top_p`:
/// ..." on the first invalid one.
void check_sampling_params(const SamplingParams& params, std::string_view where);

}  // namespace glmrt
