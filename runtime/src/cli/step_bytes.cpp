#include "step_bytes.h"

#include <glmrt/memory/memory_estimates.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <fmt/format.h>

namespace glmrt::cli {

uint64_t resident_bytes_per_decode_step(const Profile& profile,
                                        const std::filesystem::path& model_dir) {
  const ModelConfig config = load_model_config(model_dir);
  const TensorDirectory tensors = TensorDirectory::open(model_dir);
  const std::string mtp_prefix = fmt::format("model.layers.{}.", config.num_hidden_layers);
  uint64_t bytes = 0;
  for (const ResidentMatrix& m : resident_matrices(profile, config, tensors)) {
    if (m.name.ends_with("embed_tokens.weight") || m.name.starts_with(mtp_prefix)) continue;
    bytes += m.bytes();
  }
  return bytes;
}

}  // namespace glmrt::cli
