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

std::string finish_reason(StopReason reason, bool stop_string, bool tool_calls) {
  if (tool_calls) return "tool_calls";
  if (stop_string || reason == StopReason::eos) return "stop";
  return "length";
}

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
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
