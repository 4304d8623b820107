#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/shipped_chat_template.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <system_error>

namespace glmrt::text {

// A Jinja template: tens of KB in real checkpoints.
constexpr InputKind kChatTemplateFile{"the chat template", 16 * kInputMiB};
namespace {

// The names transformers picks a template by for glmrt's requests.
constexpr std::string_view kDefaultName = "default";
constexpr std::string_view kToolUseName = "tool_use";

bool present(const std::filesystem::path& file) {
  std::error_code ec;
  // A dangling link is present: reading it then says what is wrong.
  return std::filesystem::symlink_status(file, ec).type() != std::filesystem::file_type::not_found;
}

std::vector<ShippedChatTemplate> from_template_files(const std::filesystem::path& model_dir) {
  std::vector<ShippedChatTemplate> found;
  const std::filesystem::path main = model_dir / "chat_template.jinja";
  const std::filesystem::path tool_use = model_dir / "additional_chat_templates" / "tool_use.jinja";
  if (present(main))
    found.push_back({printable(main.string()), read_input_file(main, kChatTemplateFile)});
  if (present(tool_use))
    found.push_back({printable(tool_use.string()), read_input_file(tool_use, kChatTemplateFile),
                     std::string(kToolUseName)});
  return found;
}

std::vector<ShippedChatTemplate> from_tokenizer_config(const std::filesystem::path& model_dir) {
  const std::filesystem::path file = model_dir / "tokenizer_config.json";
  if (!present(file)) return {};
  const std::string shown = printable(file.string());
  const std::string text = read_input_file(file, input_kinds::tokenizer_config);
  require_json_nesting_within(text, shown);
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    fail("{}: not a JSON object (looked for its chat template)", shown);
  const auto entry = config.find("chat_template");
  if (entry == config.end() || entry->is_null()) return {};
  const std::string key = fmt::format("{}: key `chat_template`", shown);
  if (entry->is_string()) return {{key, entry->get<std::string>()}};
  if (!entry->is_array())
    fail("{}: expected a string or a list of {{\"name\", \"template\"}} objects, found {}", key,
         entry->type_name());
  std::vector<ShippedChatTemplate> found;
  std::vector<std::string> names;
  bool has_default = false;
  for (size_t i = 0; i < entry->size(); ++i) {
    const nlohmann::json& item = (*entry)[i];
    const auto name = item.is_object() ? item.find("name") : item.end();
    const auto body = item.is_object() ? item.find("template") : item.end();
    if (!item.is_object() || name == item.end() || !name->is_string() || body == item.end() ||
        !body->is_string())
      fail("{}[{}]: expected an object {{\"name\": string, \"template\": string}}", key, i);
    const std::string& n = name->get_ref<const std::string&>();
    names.push_back(fmt::format("`{}`", printable(n, 64)));
    has_default = has_default || n == kDefaultName;
    if (n == kDefaultName || n == kToolUseName)
      found.push_back(
          {fmt::format("{} (the entry named `{}`)", key, n), body->get<std::string>(), n});
  }
  if (!has_default)
    fail("{}: lists templates named {} but none named `default`, the one transformers renders with",
         key, fmt::join(names, ", "));
  return found;
}

}  // namespace

std::vector<ShippedChatTemplate> find_shipped_chat_templates(
    const std::filesystem::path& model_dir) {
  std::vector<ShippedChatTemplate> found = from_template_files(model_dir);
  if (!found.empty()) return found;
  return from_tokenizer_config(model_dir);
}

}  // namespace glmrt::text
