#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/gguf_tokenizer.h>
#include <glmrt/text/shipped_chat_template.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

#include "gguf_pre_tokenizer.h"

namespace glmrt::gguf {
namespace {

constexpr std::string_view kModel = "tokenizer.ggml.model";
constexpr std::string_view kPre = "tokenizer.ggml.pre";
constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kTokenType = "tokenizer.ggml.token_type";
constexpr std::string_view kMerges = "tokenizer.ggml.merges";

// llama.cpp's llama_token_type (gguf-py's TokenType).
enum TokenType : int32_t {
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6
};

std::string file_of(const Metadata& metadata) {
  return printable(metadata.file().string());
}

std::optional<text::TokenId> special_id(const Metadata& metadata, std::string_view key,
                                        uint64_t token_count) {
  const std::optional<uint32_t> id = metadata.find_as<uint32_t>(key);
  if (id && *id >= token_count)
    fail("{}: metadata key '{}' is {}, expected a token id below {} (the length of {})",
         file_of(metadata), key, *id, token_count, kTokens);
  return id;
}

std::vector<int32_t> token_types(const Metadata& metadata, uint64_t token_count) {
  // Optional, as llama.cpp reads it: every token is normal without it.
  if (!metadata.contains(kTokenType)) return std::vector<int32_t>(token_count, normal);
  std::vector<int32_t> types = metadata.get<std::vector<int32_t>>(kTokenType);
  if (types.size() != token_count)
    fail("{}: metadata key '{}' has {} entries, expected one per token of '{}' ({})",
         file_of(metadata), kTokenType, types.size(), kTokens, token_count);
  for (size_t id = 0; id < types.size(); ++id)
    if (types[id] < normal || types[id] > byte)
      fail("{}: metadata key '{}', element {}, is {}, expected a token type from 1 to 6",
           file_of(metadata), kTokenType, id, types[id]);
  return types;
}

std::vector<std::pair<std::string, std::string>> merges(
    const Metadata& metadata, const std::unordered_map<std::string_view, text::TokenId>& ids) {
  if (!metadata.contains(kMerges))
    fail("{} has no metadata key '{}' (a gpt2 tokenizer needs its merges)", file_of(metadata),
         kMerges);
  const auto texts = metadata.get<std::vector<std::string_view>>(kMerges);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(texts.size());
  for (size_t rank = 0; rank < texts.size(); ++rank) {
    const std::string_view text = texts[rank];
    const size_t space = text.find(' ');
    if (space == std::string_view::npos || text.find(' ', space + 1) != std::string_view::npos)
      fail("{}: metadata key '{}', element {}, is \"{}\", expected two tokens and one space",
           file_of(metadata), kMerges, rank, printable(text, 200));
    std::string left(text.substr(0, space)), right(text.substr(space + 1));
    for (const std::string& token : {left, right, left + right})
      if (!ids.contains(token))
        fail(
            "{}: metadata key '{}', element {} (\"{}\"), needs the token \"{}\", which is not in "
            "'{}'",
            file_of(metadata), kMerges, rank, printable(text, 200), printable(token, 200), kTokens);
    out.emplace_back(std::move(left), std::move(right));
  }
  return out;
}

}  // namespace

bool has_tokenizer(const Metadata& metadata) {
  if (!metadata.contains(kModel)) return false;
  // llama.cpp's names for a file without a vocabulary (only a vocab_size).
  const std::string model = metadata.get_or<std::string>(std::string(kModel), "");
  return model != "none" && model != "no_vocab";
}

TokenizerSpecials tokenizer_specials(const Metadata& metadata) {
  const uint64_t count = metadata.get_array(kTokens).size();
  TokenizerSpecials s;
  s.pre = metadata.get_or<std::string>(std::string(kPre), "default");
  s.bos = special_id(metadata, "tokenizer.ggml.bos_token_id", count);
  s.eos = special_id(metadata, "tokenizer.ggml.eos_token_id", count);
  s.eot = special_id(metadata, "tokenizer.ggml.eot_token_id", count);
  s.eom = special_id(metadata, "tokenizer.ggml.eom_token_id", count);
  s.unk = special_id(metadata, "tokenizer.ggml.unknown_token_id", count);
  s.pad = special_id(metadata, "tokenizer.ggml.padding_token_id", count);
  s.add_bos = metadata.get_or("tokenizer.ggml.add_bos_token", false);
  s.add_eos = metadata.get_or("tokenizer.ggml.add_eos_token", false);
  // llama.cpp takes no BOS for the GLM names (special_bos_id = none): GLM's
  // prompts start with "[gMASK]<sop>" written by the chat template.
  if (s.pre == "glm4" || s.pre == "chatglm-bpe") {
    s.bos.reset();
    s.add_bos = false;
  }
  if (s.add_bos && !s.bos)
    fail("{}: tokenizer.ggml.add_bos_token is true but there is no tokenizer.ggml.bos_token_id",
         file_of(metadata));
  if (s.add_eos && !s.eos)
    fail("{}: tokenizer.ggml.add_eos_token is true but there is no tokenizer.ggml.eos_token_id",
         file_of(metadata));
  return s;
}

std::vector<int32_t> end_of_generation_token_ids(const Metadata& metadata) {
  // The token texts llama.cpp's llama_vocab::load marks end-of-generation
  // whatever the file's ids say (src/llama-vocab.cpp, special_eog_ids).
  constexpr std::array<std::string_view, 21> kEndTexts = {"<|eot_id|>",
                                                          "<|im_end|>",
                                                          "<|end|>",
                                                          "<|return|>",
                                                          "<|call|>",
                                                          "<|flush|>",
                                                          "<|calls|>",
                                                          "<end_of_turn>",
                                                          "<|endoftext|>",
                                                          "</s>",
                                                          "<|eom_id|>",
                                                          "<EOT>",
                                                          "_<EOT>",
                                                          "[EOT]",
                                                          "[EOS]",
                                                          "<|end_of_text|>",
                                                          "<end_of_utterance>",
                                                          "<eos>",
                                                          "<turn|>",
                                                          "<|tool_response>",
                                                          "<｜end▁of▁sentence｜>"};
  constexpr std::array<std::string_view, 6> kIdKeys = {
      "tokenizer.ggml.eos_token_id",     "tokenizer.ggml.eot_token_id",
      "tokenizer.ggml.eom_token_id",     "tokenizer.ggml.fim_pad_token_id",
      "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id"};
  std::vector<int32_t> ids;
  if (!metadata.contains(kTokens)) {
    // No vocabulary to check them against (a file that runs on ids only):
    // the caller holds them to the model's vocab_size.
    for (std::string_view key : kIdKeys)
      if (const auto id = metadata.find_as<int32_t>(key)) ids.push_back(*id);
  } else {
    const Array& tokens = metadata.get_array(kTokens);
    if (tokens.element_type() != ValueType::string)
      fail("{}: metadata key '{}' is an array of {}, expected an array of strings",
           file_of(metadata), kTokens, value_type_name(tokens.element_type()));
    for (std::string_view key : kIdKeys)
      if (const auto id = special_id(metadata, key, tokens.size()))
        ids.push_back(static_cast<int32_t>(*id));
    for (uint64_t id = 0; id < tokens.size(); ++id)
      if (std::find(kEndTexts.begin(), kEndTexts.end(), tokens.string(id)) != kEndTexts.end())
        ids.push_back(static_cast<int32_t>(id));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

namespace {

/// The refusals that need no tokens or merges read: the tokenizer's kind, its
/// pre-tokenizer and the special ids.
std::pair<TokenizerSpecials, PreTokenizerRecipe> tokenizer_kind(const Metadata& metadata) {
  const std::string file = file_of(metadata);
  const auto model = metadata.get<std::string>(kModel);
  if (model != "gpt2")
    fail(
        "{}: metadata key '{}' is '{}', expected 'gpt2' (byte-level BPE, the only kind glmrt "
        "reads)",
        file, kModel, printable(model, 128));
  if (!metadata.contains(kPre)) fail("{} has no metadata key '{}'", file, kPre);
  TokenizerSpecials specials = tokenizer_specials(metadata);
  PreTokenizerRecipe recipe = pre_tokenizer_recipe(specials.pre, file);
  return {std::move(specials), std::move(recipe)};
}

}  // namespace

void check_tokenizer_kind(const Metadata& metadata) {
  tokenizer_kind(metadata);
}

text::Tokenizer tokenizer_from_gguf(const Metadata& metadata) {
  const std::string file = file_of(metadata);
  const auto [specials, recipe] = tokenizer_kind(metadata);

  const auto tokens = metadata.get<std::vector<std::string_view>>(kTokens);
  if (tokens.size() > (uint64_t{1} << 28))
    fail("{}: metadata key '{}' has {} tokens, more than glmrt's limit of 2^28", file, kTokens,
         tokens.size());
  const std::vector<int32_t> types = token_types(metadata, tokens.size());
  text::ByteLevelBpeParts parts;
  parts.tokens.resize(tokens.size());
  std::unordered_map<std::string_view, text::TokenId> ids;
  ids.reserve(tokens.size());
  for (text::TokenId id = 0; id < tokens.size(); ++id) {
    if (types[id] == unused) continue;  // padding such as "[PAD151700]": no token
    if (tokens[id].empty())
      fail("{}: metadata key '{}', element {}, is empty, expected a token", file, kTokens, id);
    if (const auto [it, added] = ids.emplace(tokens[id], id); !added)
      fail("{}: metadata key '{}' has \"{}\" twice (elements {} and {})", file, kTokens,
           printable(tokens[id], 200), it->second, id);
    parts.tokens[id] = std::string(tokens[id]);
    if (types[id] == control || types[id] == user_defined)
      parts.added.push_back({id, types[id] == control});
  }
  parts.merges = merges(metadata, ids);
  parts.split_regexes = recipe.split_regexes;
  parts.nfc = recipe.nfc;
  auto usable = [&](std::optional<text::TokenId> id, std::string_view key) {
    if (id && !parts.tokens[*id])
      fail("{}: metadata key '{}' is {}, a token marked unused in '{}'", file, key, *id,
           kTokenType);
    return id;
  };
  if (specials.add_bos) parts.prepend = usable(specials.bos, "tokenizer.ggml.bos_token_id");
  if (specials.add_eos) parts.append = usable(specials.eos, "tokenizer.ggml.eos_token_id");
  return text::Tokenizer::from_byte_level_bpe(parts, file);
}

std::optional<text::ModelChatTemplate> chat_template_from_gguf(const Metadata& metadata) {
  constexpr std::string_view kTemplate = "tokenizer.chat_template";
  constexpr std::string_view kToolUse = "tokenizer.chat_template.tool_use";
  if (!metadata.contains(kTemplate)) return std::nullopt;
  const std::string file = file_of(metadata);
  std::vector<text::ShippedChatTemplate> templates;
  templates.push_back({fmt::format("{}: key `{}`", file, kTemplate),
                       metadata.get<std::string>(kTemplate), "default"});
  if (metadata.contains(kToolUse))
    templates.push_back({fmt::format("{}: key `{}`", file, kToolUse),
                         metadata.get<std::string>(kToolUse), "tool_use"});
  // The variables transformers passes from tokenizer_config.json, here from
  // the ids the file names.
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  if (metadata.contains(kTokens)) {
    const TokenizerSpecials s = tokenizer_specials(metadata);
    const Array& tokens = metadata.get_array(kTokens);
    if (tokens.element_type() != ValueType::string)
      fail("{}: metadata key '{}' is an array of {}, expected an array of strings", file, kTokens,
           value_type_name(tokens.element_type()));
    const std::pair<const char*, std::optional<text::TokenId>> named[] = {
        {"bos_token", s.bos}, {"eos_token", s.eos}, {"unk_token", s.unk}, {"pad_token", s.pad}};
    for (const auto& [name, id] : named)
      if (id) special_tokens[name] = std::string(tokens.string(*id));
  }
  return text::ModelChatTemplate::from_templates(templates, std::move(special_tokens));
}

}  // namespace glmrt::gguf
