// Suggestions for misspelt keys ("did you mean `expert_cache`?").
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace glmrt {

/// The candidate closest to `word` by edit distance, when it is close enough
/// to be a plausible typo (at most a third of the word's length, minimum 2).
std::optional<std::string_view> closest_key(std::string_view word,
                                            std::span<const std::string_view> candidates);

}  // namespace glmrt
