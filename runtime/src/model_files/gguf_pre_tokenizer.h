// The pre-tokenizers `tokenizer.ggml.pre` names, as the Split regexes of the
// Hugging Face tokenizer.json each name stands for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace glmrt::gguf {

struct PreTokenizerRecipe {
  std::vector<std::string> split_regexes;  // Oniguruma syntax, applied in order
  bool nfc = false;                        // the tokenizer.json has an NFC normalizer
};

/// Throws glmrt::Error naming `file`, the key and the name when the name is
/// not one glmrt knows, listing those it does.
PreTokenizerRecipe pre_tokenizer_recipe(std::string_view name, std::string_view file);

}  // namespace glmrt::gguf
