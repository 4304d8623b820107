#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/chat_template_variables.h>

#include <array>
#include <string_view>
#include <system_error>

namespace glmrt::text {
namespace {

using TemplateJson = nlohmann::ordered_json;

// Template switches clients send at the top level of a request body, as
// well as in chat_template_kwargs (docs/chat.md).
constexpr std::array<std::string_view, 5> kTopLevelSwitches = {
    "add_generation_prompt", "enable_thinking", "thinking", "reasoning_effort", "clear_thinking"};

constexpr std::array<std::string_view, 4> kSpecialTokenKeys = {"bos_token", "eos_token",
                                                               "unk_token", "pad_token"};

}  // namespace

TemplateJson special_token_variables(const std::filesystem::path& model_dir) {
  const std::filesystem::path file = model_dir / "tokenizer_config.json";
  std::error_code ec;
  TemplateJson tokens = TemplateJson::object();
  if (std::filesystem::symlink_status(file, ec).type() == std::filesystem::file_type::not_found)
    return tokens;
  const std::string shown = printable(file.string());
  const std::string text = read_input_file(file, input_kinds::tokenizer_config);
  require_json_nesting_within(text, shown);
  const TemplateJson config = TemplateJson::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    fail("{}: not a JSON object (read for its special tokens)", shown);
  for (std::string_view key : kSpecialTokenKeys) {
    const auto entry = config.find(key);
    if (entry == config.end() || entry->is_null()) continue;
    if (entry->is_string()) {
      tokens[std::string(key)] = *entry;
    } else if (entry->is_object() && entry->contains("content") &&
               (*entry)["content"].is_string()) {
      tokens[std::string(key)] = (*entry)["content"];
    } else {
      fail("{}: key `{}`: expected a string or an object with a string `content`, found {}", shown,
           key, entry->type_name());
    }
  }
  return tokens;
}

TemplateJson chat_template_variables(const TemplateJson& request,
                                     const TemplateJson& special_tokens) {
  if (!request.is_object()) fail("chat request: expected a JSON object");
  const auto messages = request.find("messages");
  if (messages == request.end() || !messages->is_array())
    fail("chat request: 'messages' must be an array");
  TemplateJson variables = special_tokens.is_object() ? special_tokens : TemplateJson::object();
  variables["messages"] = *messages;
  const auto tools = request.find("tools");
  if (tools != request.end() && !tools->is_null() && !tools->is_array())
    fail("chat request: 'tools' must be an array");
  variables["tools"] = tools != request.end() && !tools->empty() ? *tools : TemplateJson();
  variables["documents"] = nullptr;
  variables["add_generation_prompt"] = true;
  for (std::string_view key : kTopLevelSwitches)
    if (const auto v = request.find(key); v != request.end()) variables[std::string(key)] = *v;
  if (const auto kwargs = request.find("chat_template_kwargs"); kwargs != request.end()) {
    if (!kwargs->is_object() && !kwargs->is_null())
      fail("chat request: 'chat_template_kwargs' must be an object");
    if (kwargs->is_object())
      for (const auto& [key, value] : kwargs->items()) {
        if (key == "messages" || key == "tools")
          fail("chat request: 'chat_template_kwargs' may not set '{}'", key);
        variables[key] = value;
      }
  }
  return variables;
}

}  // namespace glmrt::text
