// A chat's messages, kept as an OpenAI-style request body so every turn can be
// re-rendered whole with the model's chat template. Re-rendering (rather than
// appending tokens) gives exactly the prompt the template defines for the
// conversation so far; Session::set_context then finds how much of it is
// already cached.
#pragma once

#include <glmrt/text/model_chat_template.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

struct ChatOptions {
  bool enable_thinking = true;        // the answer starts inside <think>
  std::string reasoning_effort;       // "low", "high" or empty (= the template's default)
  bool clear_thinking = false;        // drop the reasoning of earlier answers from the prompt
  std::optional<std::string> system;  // a system message before the first turn
};

class Conversation {
 public:
  explicit Conversation(ChatOptions options);

  void add_user(std::string text);
  /// Stores what the model generated after the generation prompt. With
  /// thinking on, the text up to the last </think> is the reasoning and the
  /// rest the answer; an answer cut off before </think> is all reasoning.
  void add_assistant(std::string_view generated_text);
  /// Replaces the last assistant message (after /more continued it).
  void replace_last_assistant(std::string_view generated_text);
  /// Forgets every message (the system message stays).
  void clear();

  bool empty() const { return messages_.empty(); }
  size_t size() const { return messages_.size(); }
  const nlohmann::ordered_json& messages() const { return messages_; }
  const ChatOptions& options() const { return options_; }

  /// {"messages": [...], "chat_template_kwargs": {...}}, generation prompt on.
  nlohmann::ordered_json request() const;
  /// The prompt text, rendered with the model's chat template.
  std::string render(const text::ModelChatTemplate& chat_template) const;
  /// The prompt's tokens, the messages' text read as plain text (a typed
  /// "<|user|>" is characters, not a turn).
  std::vector<text::TokenId> encode(const text::ModelChatTemplate& chat_template,
                                    const text::Tokenizer& tokenizer) const;

 private:
  nlohmann::ordered_json assistant_message(std::string_view generated_text) const;

  ChatOptions options_;
  nlohmann::ordered_json messages_ = nlohmann::ordered_json::array();
};

}  // namespace glmrt
