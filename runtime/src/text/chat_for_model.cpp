// Chooses the chat renderer from a model directory's config.json.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/text/chat_template.h>

namespace glmrt::text {

std::string render_chat_for_model(const std::filesystem::path& model_dir,
                                  const nlohmann::ordered_json& request) {
  const std::filesystem::path config_path = model_dir / "config.json";
  const std::string text = read_input_file(config_path, input_kinds::model_config);
  require_json_nesting_within(text, config_path.string());
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    fail("{}: not a JSON object", config_path.string());
  const auto type = config.find("model_type");
  if (type == config.end() || !type->is_string())
    fail("{}: missing string field 'model_type'", config_path.string());
  if (*type == "glm_moe_dsa") return render_glm5_chat(request);
  fail("{}: model_type '{}' has no chat template renderer (supported: glm_moe_dsa)",
       config_path.string(), type->get<std::string>());
}

}  // namespace glmrt::text
