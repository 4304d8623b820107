#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/tokenizer.h>

#include <algorithm>
#include <filesystem>

#include "added_vocabulary.h"
#include "bpe_model.h"
#include "byte_level_bpe.h"
#include "decoder.h"
#include "normalizer.h"
#include "post_processor.h"
#include "pre_tokenizer.h"
#include "utf8.h"

namespace glmrt::text {

struct Tokenizer::Impl {
  std::string source;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  std::unique_ptr<AddedVocabulary> added;
};

namespace {

std::unique_ptr<BpeModel> make_model(const Json& spec, const JsonPath& where) {
  if (!spec.is_object()) fail("{}: missing or not an object", where.text);
  // Old files omit the type; their model is BPE when it has merges.
  const std::string type =
      spec.contains("type") ? component_type(spec, where) : (spec.contains("merges") ? "BPE" : "");
  if (type != "BPE") fail("{}: unsupported model type '{}' (only BPE)", where.text, type);
  return std::make_unique<BpeModel>(spec, where);
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path / "tokenizer.json", ec))
    fail("{}: cannot read the tokenizer file: it is a directory (did you mean {}?)", path.string(),
         (path / "tokenizer.json").string());
  return from_json_text(read_input_file(path, input_kinds::tokenizer), path.string());
}

Tokenizer Tokenizer::from_json_text(std::string_view json_text, std::string_view source) {
  require_json_nesting_within(json_text, source);
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{}: invalid JSON: {}", source, printable(e.what()));
  }
  return from_json_root(root, source);
}

Tokenizer Tokenizer::from_byte_level_bpe(const ByteLevelBpeParts& parts, std::string_view source) {
  return from_json_root(byte_level_bpe_json(parts, source), source,
                        std::make_unique<BpeModel>(parts.tokens, parts.merges,
                                                   JsonPath{std::string(source) + ": model"}));
}

Tokenizer Tokenizer::from_json_root(const Json& root, std::string_view source,
                                    std::unique_ptr<BpeModel> model) {
  if (!root.is_object()) fail("{}: the top level must be a JSON object", source);
  const JsonPath at{std::string(source) + ":"};
  for (const char* unsupported : {"truncation", "padding"}) {
    if (root.contains(unsupported) && !root[unsupported].is_null())
      fail("{} '{}' is not supported (must be null)", at.text, unsupported);
  }
  auto component = [&](const char* key) -> const Json& {
    static const Json null_json;  // immutable
    return root.contains(key) ? root[key] : null_json;
  };
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  impl->normalizer = make_normalizer(component("normalizer"), {at.text + " normalizer"});
  impl->pre_tokenizer =
      make_pre_tokenizer(component("pre_tokenizer"), {at.text + " pre_tokenizer"});
  impl->model = model ? std::move(model) : make_model(component("model"), {at.text + " model"});
  impl->post_processor =
      make_post_processor(component("post_processor"), {at.text + " post_processor"});
  impl->decoder = make_decoder(component("decoder"), {at.text + " decoder"});
  impl->added = std::make_unique<AddedVocabulary>(component("added_tokens"), *impl->model,
                                                  impl->normalizer.get(),
                                                  JsonPath{at.text + " added_tokens"});
  return Tokenizer(std::move(impl));
}

Encoding Tokenizer::encode_with_tokens(std::string_view text, bool add_special_tokens) const {
  if (const auto bad = utf8::first_invalid(text))
    fail("tokenizer ({}): input text is not valid UTF-8 (byte offset {})", impl_->source, *bad);
  Encoding encoding;
  std::vector<std::string> words;
  for (auto& piece : impl_->added->split(text, impl_->normalizer.get())) {
    if (piece.id) {
      encoding.ids.push_back(*piece.id);
      encoding.tokens.push_back(std::move(piece.text));
      continue;
    }
    words.assign(1, std::move(piece.text));
    if (impl_->pre_tokenizer) impl_->pre_tokenizer->pre_tokenize(words);
    for (const std::string& word : words) {
      const std::size_t first = encoding.ids.size();
      impl_->model->tokenize(word, encoding.ids);
      for (std::size_t i = first; i < encoding.ids.size(); ++i) {
        const std::string* token = impl_->model->id_to_token(encoding.ids[i]);
        encoding.tokens.push_back(token ? *token : std::string());
      }
    }
  }
  if (add_special_tokens && impl_->post_processor)
    impl_->post_processor->add_special_tokens(encoding.ids, encoding.tokens);
  return encoding;
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<TokenId> ids = encode_with_plain_text(text, {});
  if (add_special_tokens && impl_->post_processor) {
    std::vector<std::string> tokens(ids.size());
    impl_->post_processor->add_special_tokens(ids, tokens);
  }
  return ids;
}

std::vector<TokenId> Tokenizer::encode_with_plain_text(
    std::string_view text, std::span<const ByteRange> plain_text) const {
  if (const auto bad = utf8::first_invalid(text))
    fail("tokenizer ({}): input text is not valid UTF-8 (byte offset {})", impl_->source, *bad);
  for (std::size_t i = 0; i < plain_text.size(); ++i)
    if (plain_text[i].begin > plain_text[i].end || plain_text[i].end > text.size() ||
        (i > 0 && plain_text[i].begin < plain_text[i - 1].end))
      fail("tokenizer ({}): plain-text range {} [{}, {}) is not sorted within the {} bytes",
           impl_->source, i, plain_text[i].begin, plain_text[i].end, text.size());
  std::vector<TokenId> ids;
  std::vector<std::string> words;
  for (auto& piece : impl_->added->split(text, impl_->normalizer.get(), plain_text)) {
    if (piece.id) {
      ids.push_back(*piece.id);
      continue;
    }
    words.assign(1, std::move(piece.text));
    if (impl_->pre_tokenizer) impl_->pre_tokenizer->pre_tokenize(words);
    for (const std::string& word : words) impl_->model->tokenize(word, ids);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const TokenId id : ids) {
    if (const AddedToken* added = impl_->added->by_id(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* token = impl_->model->id_to_token(id)) {
      tokens.push_back(*token);
    }
  }
  if (!impl_->decoder) {
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return utf8::repair_lossy(joined);
  }
  impl_->decoder->decode_chain(tokens);
  std::string text;
  for (const auto& t : tokens) text += t;
  return utf8::repair_lossy(text);
}

std::optional<std::string> Tokenizer::token_bytes(TokenId id) const {
  if (const AddedToken* added = impl_->added->by_id(id)) {
    if (added->special) return std::nullopt;
    return added->content;
  }
  const std::string* token = impl_->model->id_to_token(id);
  if (!token) return std::nullopt;
  if (!impl_->decoder) return *token;
  std::vector<std::string> pieces{*token};
  impl_->decoder->decode_chain(pieces);
  std::string bytes;
  for (const auto& piece : pieces) bytes += piece;
  return bytes;
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto id = impl_->added->by_content(token)) return id;
  return impl_->model->token_to_id(token);
}

bool Tokenizer::is_special(TokenId id) const {
  const AddedToken* added = impl_->added->by_id(id);
  return added && added->special;
}

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (const AddedToken* added = impl_->added->by_id(id)) return added->content;
  if (const std::string* token = impl_->model->id_to_token(id)) return *token;
  return std::nullopt;
}

std::size_t Tokenizer::vocab_size() const {
  return std::max<std::size_t>(impl_->added->end_id(), impl_->model->id_end());
}

void Tokenizer::clear_cache() const {
  impl_->model->clear_cache();
}

std::vector<TokenId> special_token_ids(const Tokenizer& tokenizer,
                                       std::span<const std::string_view> contents) {
  std::vector<TokenId> ids;
  for (const std::string_view content : contents)
    if (const auto id = tokenizer.token_to_id(content); id && tokenizer.is_special(*id))
      ids.push_back(*id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace glmrt::text
