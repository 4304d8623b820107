// Chooses the chat renderer from a model directory's config.json and checks
// the template the directory ships against it.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/chat_template.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/shipped_chat_template.h>

namespace glmrt::text {
namespace {

constexpr std::string_view kOverride =
    "pass `--chat-template builtin` (or set `chat_template: builtin` in the profile) to render "
    "with the built-in GLM-5 template anyway";

void require_supported_model_type(const std::filesystem::path& model_dir) {
  const std::filesystem::path config_path = model_dir / "config.json";
  const std::string shown = printable(config_path.string());
  const std::string text = read_input_file(config_path, input_kinds::model_config);
  require_json_nesting_within(text, shown);
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) fail("{}: not a JSON object", shown);
  const auto type = config.find("model_type");
  if (type == config.end() || !type->is_string())
    fail("{}: missing string field 'model_type'", shown);
  if (*type != "glm_moe_dsa")
    fail("{}: model_type '{}' has no chat template renderer (supported: glm_moe_dsa)", shown,
         printable(type->get<std::string>(), 128));
}

// glmrt has no Jinja engine: rendering a template it does not know with the
// built-in one would give the model a prompt its template never makes.
void require_builtin_reproduces_shipped(const std::filesystem::path& model_dir) {
  std::vector<ShippedChatTemplate> shipped;
  try {
    shipped = find_shipped_chat_templates(model_dir);
  } catch (const Error& e) {
    fail("{}; {}", e.what(), kOverride);
  }
  for (const ShippedChatTemplate& t : shipped)
    if (!builtin_renders_glm5_template(t.text))
      fail(
          "{}: this chat template is not one glmrt renders (its canonical SHA-256 is {}; the "
          "built-in GLM-5 renderer reproduces only the GLM-5 templates it is tested against, "
          "and glmrt has no Jinja engine to run another): {}",
          t.source, canonical_template_sha256(t.text), kOverride);
}

}  // namespace

ModelChatTemplate ModelChatTemplate::for_model(const std::filesystem::path& model_dir,
                                               ChatTemplateChoice choice) {
  require_supported_model_type(model_dir);
  if (choice == ChatTemplateChoice::model) require_builtin_reproduces_shipped(model_dir);
  return ModelChatTemplate(&render_glm5_chat_marked);
}

}  // namespace glmrt::text
