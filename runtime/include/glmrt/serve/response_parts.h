// Pieces every OpenAI-shaped response is made of: ids, the served model's
// identity, server-sent events, finish reasons and usage.
#pragma once

#include <glmrt/generate/generator.h>
#include <glmrt/serve/json_output.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

using Json = nlohmann::ordered_json;

/// The model behind the server, as requests see it.
struct ServedModel {
  std::string name;  // what /v1/models lists and responses name
  const text::Tokenizer& tokenizer;
  std::vector<int32_t> stop_tokens;       // sorted (stop_token_ids)
  std::vector<int32_t> chat_stop_tokens;  // and the role tokens: a chat answer ends its turn
  std::shared_ptr<const SharedTokenTrie> token_trie;  // for answers constrained to JSON
  /// The format the model writes tool calls in (from its chat template).
  const ToolCallSyntax* tool_calls = &glm_tool_call_syntax();
};

/// Response ids ("chatcmpl-…", "call_…") and the seeds of requests that name
/// none: random per server start, safe to use from any thread.
class IdSource {
 public:
  IdSource();
  std::string next(std::string_view prefix);
  uint64_t seed();

 private:
  std::mutex mutex_;
  std::mt19937_64 random_;
};

/// The tokens that end an answer: the model's (with the role tokens for a
/// chat answer), or none with ignore_eos.
struct GenerationRequest;
enum class Endpoint;
std::span<const int32_t> stop_tokens(const GenerationRequest& request, const ServedModel& model,
                                     Endpoint endpoint);

/// What every response of one request repeats.
struct ResponseIdentity {
  std::string id;
  std::string model;
  int64_t created = 0;  // unix seconds
};

int64_t unix_time();

/// One server-sent event carrying `data`, and the stream's end marker.
std::string sse_event(const Json& data);
/// A named event (`event: NAME`), as Anthropic's and the Responses API's streams send.
std::string sse_event(std::string_view name, const Json& data);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

/// OpenAI's finish_reason: "length" (cut by max_tokens or a full context,
/// calls or not), else "tool_calls" when the answer holds calls, else "stop"
/// (a stop token or string).
std::string finish_reason(StopReason reason, bool stop_string, bool tool_calls);

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);

/// llama-server's `timings` of a response: the prompt tokens computed (not
/// found cached) and the time they took, the answer's tokens and theirs.
struct Timings {
  int64_t prompt_n = 0;
  double prompt_ms = 0;
  int64_t predicted_n = 0;
  double predicted_ms = 0;
  Timings& operator+=(const Timings& other);
  /// prompt_n, prompt_ms, prompt_per_token_ms, prompt_per_second and the same
  /// four of predicted.
  Json json() const;
};

/// Milliseconds since `start`.
double milliseconds_since(std::chrono::steady_clock::time_point start);

/// How a token is shown in logprobs: its own text, special tokens included
/// (a token holding part of a UTF-8 character shows as U+FFFD, as
/// transformers' decode([id]) does).
std::string token_text(const text::Tokenizer& tokenizer, int32_t token);

/// Unicode code points in UTF-8 text (OpenAI's text_offset counts characters).
int64_t code_points(std::string_view utf8);

}  // namespace glmrt::serve
