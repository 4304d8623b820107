// What cache-aware routing (routing.cache_bias) did, on a line of its own
// (run, chat, validate) and in --json: printed only when it is on, so exact
// runs print what they always did.
#pragma once

#include <glmrt/validate/profile_comparison.h>

#include <string>

#include <nlohmann/json.hpp>

namespace glmrt::cli {

/// "cache_bias: X (routing not exact): N substitutions in R decode positions
/// (S per token, P% of C expert choices)".
std::string describe_cache_bias(const CacheBiasCost& cost);
/// {"bias", "decode_positions", "choices", "substitutions", "per_token"}.
nlohmann::json cache_bias_json(const CacheBiasCost& cost);
/// The cost so far of `model`'s cache-aware routing.
CacheBiasCost cache_bias_so_far(const Model& model);

}  // namespace glmrt::cli
