// Which names map to which regexes follows llama.cpp (src/llama-vocab.cpp:
// llama_vocab::impl::load, the `tokenizer_pre ==` chain, and the
// llm_tokenizer_bpe constructor's `regex_exprs` per LLAMA_VOCAB_PRE_TYPE_*).
// llama.cpp spells `(?i:'s|...)` out as `(?:'[sS]|...)` and runs its own
// regex engine; glmrt keeps the patterns as the models' tokenizer.json files
// write them, for its Oniguruma-exact engine, so the ids match the Hugging
// Face tokenizers library (see docs/tokenizer.md).
#include "gguf_pre_tokenizer.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <array>
#include <span>

namespace glmrt::gguf {
namespace {

// LLAMA_VOCAB_PRE_TYPE_CHATGLM4 ("glm4", "chatglm-bpe"): GLM-4.5 / 4.7 / 5's
// tokenizer.json (the Llama-3 pattern).
constexpr std::string_view kGlm4 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// LLAMA_VOCAB_PRE_TYPE_QWEN2 ("qwen2"): as Llama-3's, digits one by one.
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM ("deepseek-v3"): digits, CJK/kana, then
// the main pattern, three Split stages as in DeepSeek-V3's tokenizer.json.
constexpr std::array<std::string_view, 3> kDeepSeekV3 = {
    R"(\p{N}{1,3})",
    R"([一-龥぀-ゟ゠-ヿ]+)",
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^)"
    "\r\n"
    R"(\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[)"
    "\r\n"
    R"(]*|\s*[)"
    "\r\n"
    R"(]+|\s+(?!\S)|\s+)",
};

// LLAMA_VOCAB_PRE_TYPE_KIMI_K2 ("kimi-k2"): llama.cpp implements it by hand
// (unicode.cpp, its "K2" handler) after the `pat_str` of Kimi-K2's
// tokenization_kimi.py (a tiktoken tokenizer). Its class intersections
// `[...&&[^\p{Han}]]` are written as a negative look-ahead on \p{Han}.
constexpr std::string_view kKimiK2 =
    R"([\p{Han}]+)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// LLAMA_VOCAB_PRE_TYPE_DEFAULT ("default"): llama.cpp's fallback for files
// that name no pre-tokenizer (older converters, synthetic vocabularies); no
// Hugging Face tokenizer.json stands behind it.
constexpr std::array<std::string_view, 4> kDefault = {
    R"([\p{P}\$\+<=>\^~\|]+)",
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))",
    R"(\p{N}+)",
    R"([0-9][0-9][0-9])",
};

std::vector<std::string> copies(std::span<const std::string_view> regexes) {
  return std::vector<std::string>(regexes.begin(), regexes.end());
}

}  // namespace

PreTokenizerRecipe pre_tokenizer_recipe(std::string_view name, std::string_view file) {
  if (name == "glm4" || name == "chatglm-bpe") return {{std::string(kGlm4)}, false};
  // Qwen2/2.5/3's tokenizer.json normalize to NFC; llama.cpp does not (its
  // ids differ from the library's on decomposed text), glmrt does.
  if (name == "qwen2") return {{std::string(kQwen2)}, true};
  if (name == "deepseek-v3") return {copies(kDeepSeekV3), false};
  if (name == "kimi-k2") return {{std::string(kKimiK2)}, false};
  if (name == "default") return {copies(kDefault), false};
  fail(
      "{}: tokenizer.ggml.pre '{}' is not a pre-tokenizer glmrt knows (known: glm4, "
      "chatglm-bpe, deepseek-v3, kimi-k2, qwen2, default)",
      file, printable(name, 128));
}

}  // namespace glmrt::gguf
