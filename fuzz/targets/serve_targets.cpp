// `glmrt serve`'s request bodies (chat, messages, responses, completions) and `glmrt score`'s
// request lines, parsed as the server and the score command parse them, against a byte-level
// tokenizer (every byte a token, so any text encodes).
#include <glmrt/base/error.h>
#include <glmrt/grammar/json_machine.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/score/score_request.h>
#include <glmrt/serve/api_error.h>
#include <glmrt/serve/chat_request.h>
#include <glmrt/serve/completion_request.h>
#include <glmrt/serve/messages_request.h>
#include <glmrt/serve/request_fields.h>
#include <glmrt/serve/responses_request.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <string>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

// GPT-2's byte-to-character map: printable Latin-1 bytes stand for
// themselves, the others for U+0100 on, in byte order.
std::string byte_symbol(int byte) {
  const bool printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174;
  int code = byte;
  if (!printable) {
    int shifted = 0;
    for (int b = 0; b < byte; ++b)
      if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) ++shifted;
    code = 256 + shifted;
  }
  std::string utf8;
  if (code < 0x80) {
    utf8 += static_cast<char>(code);
  } else {
    utf8 += static_cast<char>(0xC0 | (code >> 6));
    utf8 += static_cast<char>(0x80 | (code & 0x3F));
  }
  return utf8;
}

// A byte-level BPE without merges; GLM-5's chat markers are added tokens.
std::string byte_level_tokenizer_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_symbol(b)] = b;
  nlohmann::json added = nlohmann::json::array();
  int id = 256;
  for (const char* special :
       {"<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>",
        "<|observation|>", "<think>", "</think>", "<tool_call>", "</tool_call>"})
    added.push_back({{"id", id++},
                     {"content", special},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  const nlohmann::json byte_level = {{"type", "ByteLevel"},
                                     {"add_prefix_space", false},
                                     {"trim_offsets", true},
                                     {"use_regex", true}};
  const nlohmann::json tokenizer = {{"version", "1.0"},
                                    {"added_tokens", added},
                                    {"normalizer", nullptr},
                                    {"pre_tokenizer", byte_level},
                                    {"post_processor", nullptr},
                                    {"decoder", byte_level},
                                    {"model",
                                     {{"type", "BPE"},
                                      {"byte_fallback", false},
                                      {"vocab", vocab},
                                      {"merges", nlohmann::json::array()}}}};
  return tokenizer.dump();
}

void expect_ids_below(const std::vector<int32_t>& ids, int32_t vocab, std::string_view what) {
  for (int32_t id : ids) expect(id >= 0 && id < vocab, what);
}

// An accepted request never fails later where a 500 would answer it: the
// Sampler takes its settings, and it asks for no more tokens than allowed.
// An accepted response_format schema: a walk that always takes the
// smallest byte the automaton allows never meets a dead end, and a value it
// completes parses and satisfies the schema.
void check_json_format(const grammar::JsonSchema& schema) {
  grammar::JsonMachine machine(std::make_shared<const grammar::JsonSchema>(schema));
  grammar::StateRef state = machine.start();
  std::string text;
  for (int step = 0; step < 256 && !machine.finished(state); ++step) {
    grammar::StateRef next = grammar::kRejected;
    // Closing bytes first, so walks end; then anything.
    for (const char c : std::string_view("}]\"0123456789tfn-{[a,:. ")) {
      next = machine.step(state, static_cast<uint8_t>(c));
      if (next != grammar::kRejected) {
        text += c;
        break;
      }
    }
    for (int b = 0; b < 256 && next == grammar::kRejected; ++b)
      if ((next = machine.step(state, static_cast<uint8_t>(b))) != grammar::kRejected)
        text += static_cast<char>(b);
    expect(next != grammar::kRejected, "a JSON schema's automaton has no dead end");
    const auto frames = machine.snapshot(next);
    state = machine.load(frames);
  }
  if (!machine.finished(state)) return;
  const auto value = nlohmann::ordered_json::parse(text, nullptr, false);
  expect(!value.is_discarded(), "a finished JSON answer parses");
  expect(!schema.problem(value), "a finished JSON answer satisfies its schema");
}

void check_generation(const serve::GenerationRequest& g, const serve::RequestContext& context) {
  if (g.json_format) check_json_format(*g.json_format);
  try {
    Sampler sampler(g.sampling);
  } catch (const Error& e) {
    throw InvariantBroken(std::string("the parser accepted what the Sampler refuses: ") + e.what());
  }
  expect(g.sampling.max_new_tokens >= 0 &&
             g.sampling.max_new_tokens <= serve::max_tokens_limit(context),
         "max_tokens within the server's limit");
}

serve::ChatRequest responses_chat(const serve::Json& body, const serve::RequestContext& context) {
  return serve::parse_responses_request(body, context).chat;
}

// The body as one of the endpoints read into a chat request
// (/v1/chat/completions, /v1/messages, /v1/responses) reads it.
void check_chat(const nlohmann::json& body, const serve::RequestContext& context, int32_t vocab,
                serve::ChatRequest (*parse)(const serve::Json&, const serve::RequestContext&)) {
  try {
    const serve::ChatRequest r = parse(body, context);
    expect(!r.prompt.empty(), "a chat prompt has tokens");
    expect(static_cast<int64_t>(r.prompt.size()) <= context.max_context,
           "a chat prompt fits the context");
    expect_ids_below(r.prompt, vocab, "chat prompt ids are in the vocabulary");
    expect(r.top_logprobs >= -1 && r.top_logprobs <= 20, "top_logprobs in -1..20");
    check_generation(r.generation, context);
  } catch (const serve::ApiError& e) {
    expect(e.status() >= 400 && e.status() < 500, "a refused request gets a 4xx");
    refused(e);
  } catch (const Error& e) {  // text the tokenizer refuses: the server answers 400
    refused(e);
  }
}

void check_completion(const nlohmann::json& body, const serve::RequestContext& context,
                      int32_t vocab) {
  try {
    const serve::CompletionRequest r = serve::parse_completion_request(body, context);
    expect(!r.prompts.empty(), "at least one prompt");
    expect(static_cast<int64_t>(r.prompts.size()) <= context.limits.max_batch,
           "no more prompts than --max-batch");
    for (const auto& prompt : r.prompts) {
      expect(!prompt.empty(), "a completion prompt has tokens");
      expect(static_cast<int64_t>(prompt.size()) <= context.max_context,
             "a completion prompt fits the context");
      expect_ids_below(prompt, vocab, "completion prompt ids are in the vocabulary");
    }
    expect(r.logprobs >= -1 && r.logprobs <= 20, "logprobs in -1..20");
    check_generation(r.generation, context);
  } catch (const serve::ApiError& e) {
    expect(e.status() >= 400 && e.status() < 500, "a refused request gets a 4xx");
    refused(e);
  } catch (const Error& e) {
    refused(e);
  }
}

}  // namespace

int fuzz_serve_request(Input input, const ScratchDir& scratch) {
  const auto model = scratch.folder("serve_model");
  ScratchDir::write(model, "config.json", R"({"model_type": "glm_moe_dsa"})");
  const text::Tokenizer tokenizer =
      text::Tokenizer::from_json_text(byte_level_tokenizer_json(), "fuzz/byte-level.json");
  const auto vocab = static_cast<int32_t>(tokenizer.vocab_size());
  serve::ServeLimits limits;
  limits.max_tokens = 512;
  limits.max_messages = 64;
  limits.max_batch = 8;
  const auto chat_template = text::ModelChatTemplate::for_model(model);
  const serve::RequestContext context{tokenizer,        chat_template, vocab, 4096,
                                      SamplingParams{}, limits,        1};

  // The body as /v1/chat/completions, /v1/messages, /v1/responses and /v1/completions read it.
  try {
    const nlohmann::json body = serve::parse_request_body(as_text(input));
    expect(body.is_object(), "an accepted body is a JSON object");
    check_chat(body, context, vocab, serve::parse_chat_request);
    check_chat(body, context, vocab, serve::parse_messages_request);
    check_chat(body, context, vocab, responses_chat);
    check_completion(body, context, vocab);
  } catch (const serve::ApiError& e) {
    expect(e.status() == 400, "a body that does not parse gets 400");
    refused(e);
  }
  // Each line as a `glmrt score` request.
  for (const std::string_view line : split(as_text(input), "\n")) {
    try {
      const ScoreRequest r = parse_score_request(line, tokenizer, vocab, "fuzz:1");
      expect(r.context_length >= 1 && r.context_length < static_cast<int64_t>(r.tokens.size()),
             "a score request has context and continuation");
      expect_ids_below(r.tokens, vocab, "score request ids are in the vocabulary");
    } catch (const Error& e) {
      refused(e);
    }
  }
  return 0;
}

}  // namespace glmrt::fuzz
