#include <glmrt/base/error.h>
#include <glmrt/generate/conversation.h>

namespace glmrt {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";

}  // namespace

Conversation::Conversation(ChatOptions options) : options_(std::move(options)) {
  if (!options_.reasoning_effort.empty() && options_.reasoning_effort != "low" &&
      options_.reasoning_effort != "high")
    fail("chat: reasoning effort `{}` is not one of low, high (or empty for the default)",
         options_.reasoning_effort);
}

void Conversation::add_user(std::string text) {
  messages_.push_back({{"role", "user"}, {"content", std::move(text)}});
}

nlohmann::ordered_json Conversation::assistant_message(std::string_view generated_text) const {
  nlohmann::ordered_json message = {{"role", "assistant"}};
  if (!options_.enable_thinking) {
    // The prompt ended with an empty <think></think>: all of it is the answer.
    // The empty reasoning is explicit, or the template would take a stray
    // </think> in the answer for the end of reasoning and render it as such.
    message["content"] = std::string(generated_text);
    message["reasoning_content"] = "";
    return message;
  }
  // The prompt ended inside <think>, so the model's text is
  // "reasoning</think>answer"; the template renders it back in that shape.
  const size_t close = generated_text.rfind(kThinkClose);
  std::string_view reasoning = generated_text, answer;
  if (close != std::string_view::npos) {
    reasoning = generated_text.substr(0, close);
    answer = generated_text.substr(close + kThinkClose.size());
  }
  if (reasoning.starts_with(kThinkOpen)) reasoning.remove_prefix(kThinkOpen.size());
  message["content"] = std::string(answer);
  message["reasoning_content"] = std::string(reasoning);
  return message;
}

void Conversation::add_assistant(std::string_view generated_text) {
  messages_.push_back(assistant_message(generated_text));
}

void Conversation::replace_last_assistant(std::string_view generated_text) {
  if (messages_.empty() || messages_.back()["role"] != "assistant")
    fail("chat: there is no answer to continue (the last message is not the assistant's)");
  messages_.back() = assistant_message(generated_text);
}

void Conversation::clear() {
  messages_ = nlohmann::ordered_json::array();
}

nlohmann::ordered_json Conversation::request() const {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  if (options_.system) all.push_back({{"role", "system"}, {"content", *options_.system}});
  for (const auto& m : messages_) all.push_back(m);
  // `thinking` is DeepSeek-V3.1's name for GLM's `enable_thinking`: a
  // model's own template reads the one it knows.
  nlohmann::ordered_json kwargs = {{"add_generation_prompt", true},
                                   {"enable_thinking", options_.enable_thinking},
                                   {"thinking", options_.enable_thinking},
                                   {"clear_thinking", options_.clear_thinking}};
  if (!options_.reasoning_effort.empty()) kwargs["reasoning_effort"] = options_.reasoning_effort;
  return {{"messages", std::move(all)}, {"chat_template_kwargs", std::move(kwargs)}};
}

std::string Conversation::render(const text::ModelChatTemplate& chat_template) const {
  return chat_template.render(request());
}

std::vector<text::TokenId> Conversation::encode(const text::ModelChatTemplate& chat_template,
                                                const text::Tokenizer& tokenizer) const {
  return text::encode_chat_prompt(tokenizer, chat_template.render_marked(request()));
}

}  // namespace glmrt
