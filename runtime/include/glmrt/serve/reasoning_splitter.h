// Splits a GLM-5 answer into reasoning and content as it streams. With
// thinking on, the prompt ends inside <think>, so the model writes
// "reasoning</think>content"; with thinking off the prompt already closed an
// empty <think></think> and everything is content (a stray </think> stays
// part of it, as Conversation stores it).
#pragma once

#include <string>
#include <string_view>

namespace glmrt::serve {

struct ChatDelta {
  std::string reasoning, content;
  bool empty() const { return reasoning.empty() && content.empty(); }
};

class ReasoningSplitter {
 public:
  explicit ReasoningSplitter(bool starts_in_reasoning);

  /// The part of the text so far that is decided.
  ChatDelta push(std::string_view text);
  /// What was held back (a partial "</think>" that never completed).
  ChatDelta flush();
  /// Still inside the reasoning (no "</think>" yet).
  bool in_reasoning() const { return in_reasoning_; }

 private:
  bool in_reasoning_;
  bool at_start_;  // nothing emitted yet: a repeated leading <think> is dropped
  std::string pending_;
};

}  // namespace glmrt::serve
