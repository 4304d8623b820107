// A profile file as the list of its keys and values ("memory.expert_cache"
// = "16"), so rank 0 can name the first key a rank's profile differs in.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace glmrt {

using ProfileKeys = std::vector<std::pair<std::string, std::string>>;

/// Every scalar of the profile at `file` by its path (`a.b`, `a[0]`), sorted.
/// The top-level `model` is left out: each host may keep the model elsewhere.
ProfileKeys profile_keys(const std::filesystem::path& file);

struct ProfileDifference {
  std::string key, ours, theirs;  // a value absent on one side reads "(absent)"
};
/// The first key (in sorted order) whose values differ, if any.
std::optional<ProfileDifference> first_difference(const ProfileKeys& ours,
                                                  const ProfileKeys& theirs);

}  // namespace glmrt
