// The text side: tokenizer.json (load, encode, decode, stream) and the chat
// request `glmrt template --request` renders.
#include <glmrt/base/error.h>
#include <glmrt/text/chat_template_variables.h>
#include <glmrt/text/jinja_template.h>
#include <glmrt/text/stream_detokenizer.h>
#include <glmrt/text/text_commands.h>
#include <glmrt/text/tokenizer.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_targets.h"
#include "text/utf8.h"

namespace glmrt::fuzz {
namespace {

using text::TokenId;
using text::Tokenizer;

// Encoded when the input carries no text of its own: words, digits, spaces,
// punctuation, multi-byte characters and GLM special tokens.
constexpr std::string_view kDefaultText =
    "Hello, world! 123 4567  tabs\tand\nnewlines caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD "
    "\xF0\x9F\x98\x80 <|user|>hi<|assistant|><think>";

bool valid_utf8(std::string_view text) {
  return !text::utf8::first_invalid(text).has_value();
}

// Decodes `ids` whole and streamed: both are valid UTF-8 and the same text.
void check_decode(const Tokenizer& tokenizer, const std::vector<TokenId>& ids, bool skip_special) {
  const std::string whole = tokenizer.decode(ids, skip_special);
  expect(valid_utf8(whole), "decode() returns valid UTF-8");
  text::StreamDetokenizer stream(tokenizer, skip_special);
  std::string streamed;
  for (const TokenId id : ids) {
    const std::string piece = stream.push(id);
    expect(valid_utf8(piece), "StreamDetokenizer::push returns valid UTF-8");
    streamed += piece;
  }
  streamed += stream.flush();
  // The one documented exception: a byte-fallback run made invalid by a later
  // byte becomes U+FFFD in decode() after part of it was streamed.
  const bool replaced = whole.find("\xEF\xBF\xBD") != std::string::npos;
  if (!replaced && streamed != whole) {
    const size_t at = static_cast<size_t>(
        std::mismatch(streamed.begin(), streamed.end(), whole.begin(), whole.end()).first -
        streamed.begin());
    const size_t from = at > 40 ? at - 40 : 0;
    throw InvariantBroken(
        fmt::format("streamed text differs from decode(ids) at byte {}: '{}' vs '{}' ({} ids)", at,
                    streamed.substr(from, 80), whole.substr(from, 80), ids.size()));
  }
}

void check_encode(const Tokenizer& tokenizer, std::string_view text, bool add_special) {
  const text::Encoding encoding = tokenizer.encode_with_tokens(text, add_special);
  expect(encoding.ids == tokenizer.encode(text, add_special),
         "encode() = encode_with_tokens().ids");
  // The second pass goes through the per-word cache the first one filled.
  expect(encoding.ids == tokenizer.encode(text, add_special), "encode() is deterministic");
  expect(encoding.tokens.size() == encoding.ids.size(), "one token string per id");
  // Only the vocabulary's ids are known: a post_processor adds the ids its
  // JSON spells, verbatim, as the library does (the model refuses bad ones).
  for (size_t i = 0; !add_special && i < encoding.ids.size(); ++i) {
    if (encoding.ids[i] >= tokenizer.vocab_size()) {
      throw InvariantBroken(fmt::format("encoded id {} (token '{}') is not below vocab_size() {}",
                                        encoding.ids[i], encoding.tokens[i],
                                        tokenizer.vocab_size()));
    }
    expect(tokenizer.id_to_token(encoding.ids[i]).has_value(), "encoded ids have a token");
  }
  check_decode(tokenizer, encoding.ids, false);
  check_decode(tokenizer, encoding.ids, true);
}

// Ids no encoder would produce: two bytes of the text per id, some past the
// vocabulary (decode skips unknown ids).
std::vector<TokenId> ids_from_bytes(std::string_view text, size_t vocab_size) {
  std::vector<TokenId> ids;
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    const size_t value = static_cast<unsigned char>(text[i]) |
                         static_cast<size_t>(static_cast<unsigned char>(text[i + 1])) << 8;
    ids.push_back(static_cast<TokenId>(value % (vocab_size + 4)));
  }
  return ids;
}

}  // namespace

// Input: tokenizer.json, optionally followed by a NUL byte (never valid inside
// JSON) and the text to encode; without one, kDefaultText is encoded.
int fuzz_tokenizer(Input input, const ScratchDir&) {
  const std::string_view all = as_text(input);
  const size_t nul = all.find('\0');
  const std::string_view json = all.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? kDefaultText : all.substr(nul + 1);
  try {
    const Tokenizer tokenizer = Tokenizer::from_json_text(json, "fuzz/tokenizer.json");
    try {
      check_encode(tokenizer, text, false);
      check_encode(tokenizer, text, true);
    } catch (const Error& e) {  // text that is not UTF-8; decoding still runs
      refused(e);
    }
    const std::vector<TokenId> ids = ids_from_bytes(text, tokenizer.vocab_size());
    check_decode(tokenizer, ids, false);
    check_decode(tokenizer, ids, true);
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

// Input: the request body. The model folder holds only the config.json that
// selects the GLM-5 renderer, as a real checkpoint's does.
int fuzz_chat_request(Input input, const ScratchDir& scratch) {
  const auto model = scratch.folder("chat_model");
  ScratchDir::write(model, "config.json", R"({"model_type": "glm_moe_dsa"})");
  try {
    const std::string prompt = text::render_request(text::ModelChatTemplate::for_model(model),
                                                    as_text(input), "request.json");
    expect(valid_utf8(prompt), "the rendered prompt is valid UTF-8");
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

// Rendered when the input carries no request of its own: every role, a tool
// call, a tool result, content parts and a `null` content.
constexpr std::string_view kDefaultChatRequest = R"({"messages": [
  {"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi <|user|>"},
  {"role": "assistant", "content": null, "reasoning_content": "think",
   "tool_calls": [{"id": "c1", "type": "function",
                   "function": {"name": "f", "arguments": {"x": [1, 2.5, null, true]}}}]},
  {"role": "tool", "tool_call_id": "c1", "content": "ok"},
  {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}],
  "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
  "chat_template_kwargs": {"enable_thinking": false}})";

// Input: the template source, optionally followed by a NUL byte and the
// request body. The bounds are small so a hostile template ends in an error
// within the fuzzer's time limit, not a timeout.
int fuzz_chat_template(Input input, const ScratchDir&) {
  const std::string_view all = as_text(input);
  const size_t nul = all.find('\0');
  const std::string_view source = all.substr(0, nul);
  const std::string_view body =
      nul == std::string_view::npos ? kDefaultChatRequest : all.substr(nul + 1);
  const nlohmann::ordered_json request = nlohmann::ordered_json::parse(body, nullptr, false);
  if (request.is_discarded()) return 0;
  try {
    const text::JinjaTemplate chat_template(source, "fuzz/chat_template.jinja");
    const nlohmann::ordered_json special = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
    const std::string_view marked[] = {"messages", "tools"};
    const text::RenderedChat out =
        chat_template.render(text::chat_template_variables(request, special), marked,
                             text::JinjaLimits{1 << 20, 64, 100'000, 16 << 20});
    expect(valid_utf8(out.text), "the rendered prompt is valid UTF-8");
    size_t end = 0;
    for (const text::ByteRange& range : out.content) {
      expect(range.begin >= end && range.begin < range.end && range.end <= out.text.size(),
             "marked ranges are sorted, disjoint, non-empty and inside the prompt");
      end = range.end;
    }
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
