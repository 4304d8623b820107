#include <glmrt/base/error.h>
#include <glmrt/generate/sampler.h>

#include <nlohmann/json.hpp>

#include <fstream>

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

}  // namespace

SamplingParams resolve_sampling(const std::filesystem::path& model_dir, const Profile& profile) {
  SamplingParams p;
  const auto file = model_dir / "generation_config.json";
  if (std::ifstream in{file}) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      fail("{}: not valid JSON ({})", file, e.what());
    }
    bool do_sample = true;
    read_if_present(j, "do_sample", do_sample, file);
    read_if_present(j, "temperature", p.temperature, file);
    read_if_present(j, "top_p", p.top_p, file);
    read_if_present(j, "top_k", p.top_k, file);
    read_if_present(j, "min_p", p.min_p, file);
    read_if_present(j, "repetition_penalty", p.repetition_penalty, file);
    read_if_present(j, "max_new_tokens", p.max_new_tokens, file);
    if (!do_sample) p.temperature = 0.0;
  }
  const GenerationDefaults& g = profile.generation;
  if (g.temperature) p.temperature = *g.temperature;
  if (g.top_p) p.top_p = *g.top_p;
  if (g.top_k) p.top_k = *g.top_k;
  if (g.min_p) p.min_p = *g.min_p;
  if (g.repetition_penalty) p.repetition_penalty = *g.repetition_penalty;
  if (g.presence_penalty) p.presence_penalty = *g.presence_penalty;
  if (g.seed) p.seed = *g.seed;
  if (g.max_new_tokens) p.max_new_tokens = *g.max_new_tokens;
  return p;
}

}  // namespace glmrt
