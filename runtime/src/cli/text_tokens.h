// The text of `score --perplexity`, `calibrate --text` and `validate
// --against --text`, read and tokenized within the memory plan: a 10 MB text
// under a 40 MiB budget reached 220 MB before the plan was checked.
#pragma once

#include <glmrt/profile/profile.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace glmrt::cli {

/// The ids of `file` with the tokenizer's special tokens (as encoding it
/// whole gives them). Before a byte is read, the memory plan of `profile`
/// for the model in `folder` is worked out as the engine will (`budget: auto`
/// from the memory and cgroup available now) and refused when its minimum
/// does not fit; the text is then read and tokenized a chunk at a time, and
/// refused as soon as its ids outgrow what the budget leaves above that
/// minimum, naming `flag` and the file.
std::vector<int32_t> read_text_tokens(std::string_view flag, const std::filesystem::path& file,
                                      const text::Tokenizer& tokenizer, const Profile& profile,
                                      const std::filesystem::path& folder);

}  // namespace glmrt::cli
