#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/text_commands.h>

#include <nlohmann/json.hpp>

namespace glmrt::text {

std::string tokenize_to_json(const Tokenizer& tokenizer, std::string_view input,
                             bool add_special_tokens) {
  return nlohmann::json(tokenizer.encode(input, add_special_tokens)).dump();
}

std::string decode_json_ids(const Tokenizer& tokenizer, std::string_view json_ids) {
  require_json_nesting_within(json_ids, "tokenize --decode: stdin");
  const nlohmann::json parsed = nlohmann::json::parse(json_ids, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array())
    fail("tokenize --decode: stdin must hold a JSON array of token ids");
  // An id past the vocabulary would decode to nothing, silently.
  const std::size_t vocab_size = tokenizer.vocab_size();
  std::vector<TokenId> ids;
  ids.reserve(parsed.size());
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    const nlohmann::json& id = parsed[i];
    if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= vocab_size)
      fail(
          "tokenize --decode: element {} ({}) is not a token id of the tokenizer's vocabulary "
          "({} tokens: ids 0 to {})",
          i, printable(id.dump(), 64), vocab_size, vocab_size - 1);
    if (!tokenizer.id_to_token(id.get<TokenId>()))
      fail("tokenize --decode: element {} ({}) is an id no token of the tokenizer has", i,
           id.get<TokenId>());
    ids.push_back(id.get<TokenId>());
  }
  return tokenizer.decode(ids);
}

std::string render_request(const ModelChatTemplate& chat_template, std::string_view request_json,
                           std::string_view source) {
  require_json_nesting_within(request_json, source);
  nlohmann::ordered_json request;
  try {
    request = nlohmann::ordered_json::parse(request_json);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{}: invalid JSON: {}", source, e.what());
  }
  if (!request.is_object()) fail("{}: the request body must be a JSON object", source);
  return chat_template.render(request);
}

}  // namespace glmrt::text
