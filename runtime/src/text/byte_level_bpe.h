// A ByteLevelBpeParts spelled as the tokenizer.json it stands for, so that it
// is built (and encodes) exactly as that file would; all but the "model"
// (vocabulary and merges), which BpeModel takes as parts.
#pragma once

#include <glmrt/text/tokenizer.h>

#include <string_view>

#include "component_json.h"

namespace glmrt::text {

// Throws glmrt::Error prefixed by `source` for an added id with no token.
Json byte_level_bpe_json(const ByteLevelBpeParts& parts, std::string_view source);

}  // namespace glmrt::text
