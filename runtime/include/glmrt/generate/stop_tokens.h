// The token ids that end an answer. A checkpoint names them in up to three
// places, and GLM-5 lists several (<|endoftext|>, <|user|>, <|observation|>):
// a chat model stops when it hands the turn back, not only at end of text.
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace glmrt {

/// The union, sorted and without duplicates, of config.json's eos_token_id(s)
/// (already in `config`), `model_dir`/generation_config.json's eos_token_id
/// (an id or a list) and `model_dir`/tokenizer_config.json's eos_token (a
/// string or {"content": ...}, looked up in its added_tokens_decoder). Files
/// that are absent are skipped; malformed ones are errors naming file and key,
/// as are generation_config.json's eos, bos and pad ids outside
/// config.vocab_size.
std::vector<int32_t> stop_token_ids(const ModelConfig& config,
                                    const std::filesystem::path& model_dir);

/// `stops` (sorted) with the chat template's role tokens the tokenizer holds
/// as special tokens (<|system|>, <|user|>, <|assistant|>, <|observation|>):
/// a chat answer that generates one has ended its turn, whether or not the
/// checkpoint lists it (GLM-5 lists <|user|> and <|observation|> only, and
/// the demo model sometimes opens a second <|assistant|> turn).
std::vector<int32_t> with_role_tokens(std::vector<int32_t> stops, const text::Tokenizer& tokenizer);

}  // namespace glmrt
