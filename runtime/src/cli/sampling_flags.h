// Sampling flags shared by `glmrt run` and `glmrt chat`. A flag given on the
// command line wins over the profile's `generation:` section, which wins over
// the checkpoint's generation_config.json.
#pragma once

#include <glmrt/sampling/sampler.h>

#include <boost/program_options.hpp>

namespace glmrt::cli {

/// --temperature, --top-k, --top-p, --min-p, --repetition-penalty,
/// --presence-penalty, --frequency-penalty, --seed, -n/--max-new-tokens.
boost::program_options::options_description sampling_flags();

/// Rejects out-of-range sampling flags (NaN included, a negative --seed) before anything heavy
/// (the model) loads; the error names the flag.
void check_sampling_flags(const boost::program_options::variables_map& vm);

/// `defaults` with every sampling flag present in `vm` applied on top.
SamplingParams apply_sampling_flags(SamplingParams defaults,
                                    const boost::program_options::variables_map& vm);

}  // namespace glmrt::cli
