// The tokenizer and chat template a GGUF file carries (llama.cpp's
// `tokenizer.*` keys), as glmrt's Hugging Face-exact Tokenizer and Jinja
// chat template. See docs/gguf.md "Tokenizer and chat template".
#pragma once

#include <glmrt/model_files/gguf_metadata.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::gguf {

/// Whether the file carries a tokenizer: `tokenizer.ggml.model` is there and
/// is not "none" or "no_vocab" (llama.cpp's word for a file without one).
bool has_tokenizer(const Metadata& metadata);

/// The special ids and flags of `tokenizer.ggml.*`, each checked to name a
/// token of `tokenizer.ggml.tokens`. As llama.cpp, no BOS for the GLM
/// pre-tokenizer names (`glm4`, `chatglm-bpe`): their chat template writes
/// the prompt's start.
struct TokenizerSpecials {
  std::optional<text::TokenId> bos, eos, eot, eom, unk, pad;
  bool add_bos = false;  // tokenizer.ggml.add_bos_token
  bool add_eos = false;
  std::string pre;  // tokenizer.ggml.pre
};
TokenizerSpecials tokenizer_specials(const Metadata& metadata);

/// The ids that end generation, as llama.cpp's vocabulary gathers them
/// (special_eog_ids): eos, eot, eom and the FIM pad/rep/sep ids the file
/// names, and every token spelled as one of the end-of-turn texts llama.cpp
/// knows ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", ...). Sorted, without
/// duplicates; the tokenizer itself is not built (its merges are not read).
/// Without `tokenizer.ggml.tokens`, the ids the keys name, unchecked.
std::vector<int32_t> end_of_generation_token_ids(const Metadata& metadata);

/// Throws as tokenizer_from_gguf() does for what needs no tokens or merges
/// read: a model other than "gpt2", a missing or unknown pre-tokenizer, a
/// special id out of range. A check before a model loads.
void check_tokenizer_kind(const Metadata& metadata);
/// The byte-level BPE tokenizer of `tokenizer.ggml.model` "gpt2": tokens
/// (token_type 3 control = special added tokens, 4 user-defined = added
/// tokens, 5 unused = no token), merges, the pre-tokenizer `tokenizer.ggml.pre`
/// names, and BOS/EOS added by encode(text, true) as add_bos_token /
/// add_eos_token say. Throws glmrt::Error naming the file and the key for a
/// missing key, arrays of different lengths, a merge of unknown tokens, an
/// unknown model or pre-tokenizer, an id out of range.
text::Tokenizer tokenizer_from_gguf(const Metadata& metadata);

/// `tokenizer.chat_template` (and `tokenizer.chat_template.tool_use`, taken
/// for requests with tools) parsed by glmrt's Jinja engine, with the
/// bos/eos/unk/pad tokens as its special-token variables; nullopt when the
/// file has none. A template that does not parse is an error naming the file
/// and the key, as for tokenizer_config.json.
std::optional<text::ModelChatTemplate> chat_template_from_gguf(const Metadata& metadata);

}  // namespace glmrt::gguf
