#include "byte_level_bpe.h"

namespace glmrt::text {
namespace {

Json split_isolated(const std::string& regex) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", "Isolated"},
          {"invert", false}};
}

Json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", false},
          {"use_regex", use_regex}};
}

const std::string& token_of(const ByteLevelBpeParts& parts, TokenId id, std::string_view source,
                            std::string_view what) {
  if (id >= parts.tokens.size() || !parts.tokens[id])
    fail("{}: {} id {} has no token (the vocabulary has {} ids)", source, what, id,
         parts.tokens.size());
  return *parts.tokens[id];
}

// The single-sequence TemplateProcessing that puts `prepend` / `append` around the text.
Json post_processor(const ByteLevelBpeParts& parts, std::string_view source) {
  if (!parts.prepend && !parts.append) return nullptr;
  Json single = Json::array(), specials = Json::object();
  auto special = [&](TokenId id, std::string_view what) {
    const std::string& token = token_of(parts, id, source, what);
    specials[token] = {{"id", token}, {"ids", {id}}, {"tokens", {token}}};
    single.push_back({{"SpecialToken", {{"id", token}, {"type_id", 0}}}});
  };
  if (parts.prepend) special(*parts.prepend, "the BOS token to add");
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (parts.append) special(*parts.append, "the EOS token to add");
  return {{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", specials}};
}

}  // namespace

Json byte_level_bpe_json(const ByteLevelBpeParts& parts, std::string_view source) {
  // Added tokens are also in the model's vocabulary (as GPT-2's <|endoftext|>
  // is): that is what keeps their ids when the vocabulary has gaps.
  Json added = Json::array();
  for (const ByteLevelBpeParts::Added& token : parts.added)
    added.push_back({{"id", token.id},
                     {"content", token_of(parts, token.id, source, "added token")},
                     {"special", token.special},
                     {"normalized", false},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false}});
  Json pre = Json::array();
  for (const std::string& regex : parts.split_regexes) pre.push_back(split_isolated(regex));
  pre.push_back(byte_level(false));
  return {{"normalizer", parts.nfc ? Json{{"type", "NFC"}} : Json()},
          {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", pre}}},
          {"added_tokens", std::move(added)},
          {"post_processor", post_processor(parts, source)},
          {"decoder", byte_level(true)}};
}

}  // namespace glmrt::text
