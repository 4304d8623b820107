// `--prompt-ids 1,2,3`: token ids as a user types them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace glmrt::cli {

/// Parses comma-separated decimal token ids; spaces around an id are allowed.
/// An empty element ("1,,2", a trailing comma), a sign ("+1", "-1"), anything
/// but digits or an id above INT32_MAX is a glmrt::Error naming `flag`, the
/// element and its position.
std::vector<int32_t> parse_token_id_list(std::string_view text, std::string_view flag);

}  // namespace glmrt::cli
