#include <glmrt/convert/loadable_check.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/model/model_weights.h>
#include <glmrt/model_files/tensor_usage.h>
#include <glmrt/weights/tensor_loader.h>

namespace glmrt {

void check_loadable(const ModelConfig& config, const TensorDirectory& tensors,
                    const std::filesystem::path& model_dir) {
  TensorUsage usage(tensors);
  TensorLoader loader(tensors, nullptr, &usage, TensorLoader::Mode::check);
  // The precision asked for changes what is converted, not what is checked.
  const ModelWeights weights = load_model_weights(config, loader, Profile{});
  const int expert_layers = config.num_hidden_layers + (weights.mtp ? 1 : 0);
  for (const auto& layer : plan_expert_layouts(config, tensors, expert_layers))
    for (const ExpertLayout& expert : layer)
      for (const ExpertTensorPlace& place : expert.tensors) {
        if (place.values) usage.mark(*place.values);
        if (place.scales) usage.mark(*place.scales);
      }
  usage.warn_unused(model_dir);
}

}  // namespace glmrt
