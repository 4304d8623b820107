#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/sampling/sampling_limits.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <type_traits>

namespace glmrt {
namespace {

template <typename T>
void read_if_present(const nlohmann::json& j, const char* key, T& out,
                     const std::filesystem::path& file) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("{}: key `{}` has the wrong type ({})", file, key, it->type_name());
  }
}

// A sampling value read from the file, held to the range the flags and the
// profile are.
template <typename T>
void read_setting_if_present(const nlohmann::json& j, SamplingSetting setting, T& out,
                             const std::filesystem::path& file) {
  const std::string key(sampling_range(setting).key);
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number() || (std::is_integral_v<T> && !it->is_number_integer()))
    fail("{}: key `{}` has the wrong type ({}), expected {}", file, key, it->type_name(),
         sampling_range(setting).expected());
  const double value = it->get<double>();
  if (auto error = sampling_value_error(setting, value))
    fail("{}: key `{}`: {}", file, key, *error);
  out = static_cast<T>(value);
}

// Absent is fine (defaults apply); present but unreadable is an error.
std::optional<nlohmann::json> read_generation_config(const std::filesystem::path& file) {
  const std::optional<std::string> read =
      read_input_file_if_present(file, input_kinds::generation_config);
  if (!read) return std::nullopt;
  const std::string& text = *read;
  require_json_nesting_within(text, file.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON ({})", file, printable(e.what()));
  }
  if (!j.is_object()) fail("{}: expected a JSON object, found {}", file, j.type_name());
  return j;
}

}  // namespace

SamplingParams resolve_sampling(const std::filesystem::path& model_dir, const Profile& profile) {
  SamplingParams p;
  const auto file = model_dir / "generation_config.json";
  std::error_code ec;  // a GGUF file has no generation_config.json beside it
  const bool folder = std::filesystem::is_directory(model_dir, ec);
  if (const std::optional<nlohmann::json> config =
          folder ? read_generation_config(file) : std::nullopt) {
    const nlohmann::json& j = *config;
    using S = SamplingSetting;
    bool do_sample = true;
    read_if_present(j, "do_sample", do_sample, file);
    read_setting_if_present(j, S::temperature, p.temperature, file);
    read_setting_if_present(j, S::top_p, p.top_p, file);
    read_setting_if_present(j, S::top_k, p.top_k, file);
    read_setting_if_present(j, S::min_p, p.min_p, file);
    read_setting_if_present(j, S::repetition_penalty, p.repetition_penalty, file);
    read_setting_if_present(j, S::max_new_tokens, p.max_new_tokens, file);
    if (!do_sample) p.temperature = 0.0;
  }
  const GenerationDefaults& g = profile.generation;
  if (g.temperature) p.temperature = *g.temperature;
  if (g.top_p) p.top_p = *g.top_p;
  if (g.top_k) p.top_k = *g.top_k;
  if (g.min_p) p.min_p = *g.min_p;
  if (g.repetition_penalty) p.repetition_penalty = *g.repetition_penalty;
  if (g.presence_penalty) p.presence_penalty = *g.presence_penalty;
  if (g.frequency_penalty) p.frequency_penalty = *g.frequency_penalty;
  if (g.seed) p.seed = *g.seed;
  if (g.max_new_tokens) p.max_new_tokens = *g.max_new_tokens;
  return p;
}

}  // namespace glmrt
