#include <glmrt/serve/generation_request.h>
#include <glmrt/serve/response_parts.h>

#include <fmt/format.h>

#include <chrono>

namespace glmrt::serve {

IdSource::IdSource() : random_(std::random_device{}()) {}

std::string IdSource::next(std::string_view prefix) {
  std::lock_guard lock(mutex_);
  return fmt::format("{}{:016x}{:08x}", prefix, random_(), static_cast<uint32_t>(random_()));
}

uint64_t IdSource::seed() {
  std::lock_guard lock(mutex_);
  return random_();
}

std::span<const int32_t> stop_tokens(const GenerationRequest& request, const ServedModel& model,
                                     Endpoint endpoint) {
  if (request.ignore_eos) return {};
  return endpoint == Endpoint::chat ? model.chat_stop_tokens : model.stop_tokens;
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string sse_event(const Json& data) {
  return "data: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

std::string sse_event(std::string_view name, const Json& data) {
  return fmt::format("event: {}\n", name) + sse_event(data);
}

std::string finish_reason(StopReason reason, bool stop_string, bool tool_calls) {
  // Cut by max_tokens or a full context: "length", even with calls (a forced
  // call's arguments may be cut short), so the client knows.
  if (!stop_string && (reason == StopReason::length || reason == StopReason::context_full))
    return "length";
  return tool_calls ? "tool_calls" : "stop";
}

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

Timings& Timings::operator+=(const Timings& other) {
  prompt_n += other.prompt_n;
  prompt_ms += other.prompt_ms;
  predicted_n += other.predicted_n;
  predicted_ms += other.predicted_ms;
  return *this;
}

Json Timings::json() const {
  const auto per_token = [](double ms, int64_t n) { return n > 0 ? ms / n : 0.0; };
  const auto per_second = [](double ms, int64_t n) { return ms > 0 ? 1e3 * n / ms : 0.0; };
  return {{"prompt_n", prompt_n},
          {"prompt_ms", prompt_ms},
          {"prompt_per_token_ms", per_token(prompt_ms, prompt_n)},
          {"prompt_per_second", per_second(prompt_ms, prompt_n)},
          {"predicted_n", predicted_n},
          {"predicted_ms", predicted_ms},
          {"predicted_per_token_ms", per_token(predicted_ms, predicted_n)},
          {"predicted_per_second", per_second(predicted_ms, predicted_n)}};
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string token_text(const text::Tokenizer& tokenizer, int32_t token) {
  const text::TokenId id = static_cast<text::TokenId>(token);
  return tokenizer.decode(std::span(&id, 1));
}

int64_t code_points(std::string_view utf8) {
  int64_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace glmrt::serve
