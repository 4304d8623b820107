#include <glmrt/serve/held_text.h>
#include <glmrt/serve/reasoning_splitter.h>

#include <utility>

namespace glmrt::serve {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

}  // namespace

ReasoningSplitter::ReasoningSplitter(bool starts_in_reasoning)
    : in_reasoning_(starts_in_reasoning), at_start_(starts_in_reasoning) {}

ChatDelta ReasoningSplitter::push(std::string_view text) {
  ChatDelta delta;
  if (!in_reasoning_) {
    delta.content = text;
    return delta;
  }
  pending_ += text;
  if (at_start_) {
    // The prompt opened <think> already; a model that opens it again has not
    // started reasoning yet.
    if (pending_.size() < kOpen.size() && kOpen.starts_with(pending_)) return delta;
    if (pending_.starts_with(kOpen)) pending_.erase(0, kOpen.size());
    at_start_ = false;
  }
  if (const size_t close = pending_.find(kClose); close != std::string::npos) {
    delta.reasoning = pending_.substr(0, close);
    delta.content = pending_.substr(close + kClose.size());
    pending_.clear();
    in_reasoning_ = false;
    return delta;
  }
  const size_t hold = partial_marker_length(pending_, kClose);
  delta.reasoning = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return delta;
}

ChatDelta ReasoningSplitter::flush() {
  ChatDelta delta;
  delta.reasoning = std::exchange(pending_, {});
  return delta;
}

}  // namespace glmrt::serve
