#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/score/score_request.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <string>

namespace glmrt {
namespace {

// Parsing depth the JSON form may use; requests are flat, so deeper input is
// malformed (and would otherwise cost stack in the recursive dump()).
constexpr int kMaxJsonDepth = 8;

std::vector<int32_t> ids_from_json(const nlohmann::json& value, int32_t vocab_size,
                                   std::string_view where, std::string_view field) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < value.size(); ++i) {
    const auto& v = value[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size)
      fail("{}: `{}[{}]` is {} (expected a token id in 0..{})", where, field, i, v.dump(),
           vocab_size - 1);
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return ids;
}

std::vector<int32_t> encode(const text::Tokenizer& tokenizer, std::string_view text,
                            bool add_special_tokens) {
  const auto ids = tokenizer.encode(text, add_special_tokens);
  return {ids.begin(), ids.end()};
}

ScoreRequest from_texts(std::string context, std::string continuation,
                        const text::Tokenizer& tokenizer) {
  // lm-evaluation-harness: a context ending in spaces hands them to the
  // continuation (" Paris" is one token, "Paris" after "is " is not).
  const size_t kept = context.find_last_not_of(" \t\n\r");
  const size_t cut = kept == std::string::npos ? 0 : kept + 1;
  continuation.insert(0, context.substr(cut));
  context.resize(cut);
  ScoreRequest r;
  r.context_length = static_cast<int64_t>(encode(tokenizer, context, true).size());
  r.tokens = encode(tokenizer, context + continuation, true);
  return r;
}

ScoreRequest parse_json_request(std::string_view line, const text::Tokenizer& tokenizer,
                                int32_t vocab_size, std::string_view where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth)
        fail("{}: JSON nested deeper than {} levels", where, kMaxJsonDepth);
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON ({})", where, printable(e.what()));
  }
  if (!j.is_object()) fail("{}: expected a JSON object, found {}", where, j.type_name());
  for (const char* key : {"context", "continuation"}) {
    const auto it = j.find(key);
    if (it == j.end()) fail("{}: missing `{}` (text or a list of token ids)", where, key);
    if (!it->is_string() && !it->is_array())
      fail("{}: `{}` is {} (expected text or a list of token ids)", where, key, it->type_name());
  }
  const auto& context = j["context"];
  const auto& continuation = j["continuation"];
  ScoreRequest r;
  if (context.is_string() && continuation.is_string()) {
    r = from_texts(context.get<std::string>(), continuation.get<std::string>(), tokenizer);
  } else {
    r.tokens = context.is_string() ? encode(tokenizer, context.get<std::string>(), true)
                                   : ids_from_json(context, vocab_size, where, "context");
    r.context_length = static_cast<int64_t>(r.tokens.size());
    const auto rest = continuation.is_string()
                          ? encode(tokenizer, continuation.get<std::string>(), false)
                          : ids_from_json(continuation, vocab_size, where, "continuation");
    r.tokens.insert(r.tokens.end(), rest.begin(), rest.end());
  }
  if (r.context_length < 1)
    fail("{}: the context encodes to no tokens (the first token has no prediction to score)",
         where);
  if (static_cast<int64_t>(r.tokens.size()) <= r.context_length)
    fail("{}: the continuation encodes to no tokens after the context's", where);
  return r;
}

// The next whitespace-separated integer of `rest`, or nothing at its end.
bool next_integer(std::string_view& rest, int64_t& value, std::string_view where,
                  std::string_view what) {
  const size_t start = rest.find_first_not_of(" \t\r");
  if (start == std::string_view::npos) return false;
  rest.remove_prefix(start);
  const size_t end = std::min(rest.find_first_of(" \t\r"), rest.size());
  const std::string_view word = rest.substr(0, end);
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || ptr != word.data() + word.size())
    fail("{}: `{}` is not an integer ({})", where, printable(word, 40), what);
  rest.remove_prefix(end);
  return true;
}

ScoreRequest parse_seed_request(std::string_view line, int32_t vocab_size, std::string_view where) {
  int64_t context_length = 0, continuation_length = 0;
  std::string_view rest = line;
  if (!next_integer(rest, context_length, where, "the context length") ||
      !next_integer(rest, continuation_length, where, "the continuation length"))
    fail("{}: expected `ctx_len cont_len id...`", where);
  if (context_length < 1)
    fail("{}: ctx_len is {} (the context needs at least one token)", where, context_length);
  if (continuation_length < 1)
    fail("{}: cont_len is {} (the continuation needs at least one token)", where,
         continuation_length);
  ScoreRequest r;
  r.context_length = context_length;
  int64_t id = 0;
  while (next_integer(rest, id, where, "a token id")) {
    if (id < 0 || id >= vocab_size)
      fail("{}: token id {} is outside the vocabulary (0..{})", where, id, vocab_size - 1);
    r.tokens.push_back(static_cast<int32_t>(id));
  }
  if (static_cast<int64_t>(r.tokens.size()) != context_length + continuation_length)
    fail("{}: {} token ids, but ctx_len + cont_len = {}", where, r.tokens.size(),
         context_length + continuation_length);
  return r;
}

}  // namespace

ScoreRequest parse_score_request(std::string_view line, const text::Tokenizer& tokenizer,
                                 int32_t vocab_size, std::string_view where) {
  const size_t start = line.find_first_not_of(" \t\r");
  if (start != std::string_view::npos && line[start] == '{')
    return parse_json_request(line, tokenizer, vocab_size, where);
  return parse_seed_request(line, vocab_size, where);
}

std::vector<ScoreRequest> read_score_requests(std::string_view text, std::string_view source,
                                              const text::Tokenizer& tokenizer,
                                              int32_t vocab_size) {
  std::vector<ScoreRequest> requests;
  InputLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos || line[start] == '#') continue;
    requests.push_back(parse_score_request(line, tokenizer, vocab_size,
                                           fmt::format("{}:{}", source, lines.number())));
  }
  return requests;
}

}  // namespace glmrt
