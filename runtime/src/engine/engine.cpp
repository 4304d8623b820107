#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/weights/tensor_loader.h>

#include <omp.h>

#include <cstdio>

namespace glmrt {

int effective_threads(const Profile& profile) {
  return profile.threads > 0 ? profile.threads : omp_get_num_procs();
}

int effective_prefetch_slots(const Profile& profile, int experts_per_token) {
  return profile.prefetch_slots ? *profile.prefetch_slots : experts_per_token;
}

std::unique_ptr<Engine> Engine::open(const Profile& profile,
                                     const std::filesystem::path& model_dir) {
  std::filesystem::path dir = model_dir;
  if (dir.empty()) {
    if (!profile.model)
      fail("no model: pass --model DIR or set `model:` in the profile {}", profile.file);
    dir = *profile.model;
  }
  return std::unique_ptr<Engine>(new Engine(profile, dir));
}

Engine::Engine(const Profile& profile, std::filesystem::path model_dir)
    : profile_(profile),
      model_dir_(std::move(model_dir)),
      budget_(profile.memory_budget_bytes),
      services_(budget_, effective_threads(profile)),
      host_(profile),
      kernels_(host_.create_kernels(profile.kernels, services_)),
      io_(host_.create_io(profile.io, services_)),
      tensors_(TensorDirectory::open(model_dir_)) {
  omp_set_num_threads(services_.n_threads());
  ModelConfig config = load_model_config(model_dir_);
  const int layers_with_mtp =
      config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0);
  TensorLoader loader(tensors_, &budget_);
  ModelWeights weights = load_model_weights(config, loader, profile_);
  const int expert_layers = weights.mtp ? layers_with_mtp : config.num_hidden_layers;
  io_channel_ = std::make_unique<IoChannel>(*io_, io_.info().abi_minor, tensors_.files());
  const ExpertPoolSizes pools{profile_.expert_cache_per_layer,
                              effective_prefetch_slots(profile_, config.num_experts_per_tok)};
  experts_ = std::make_unique<ExpertStore>(plan_expert_layouts(config, tensors_, expert_layers),
                                           *io_channel_, profile_.expert_bits, pools, &budget_,
                                           services_.n_threads());
  model_ = std::make_unique<Model>(std::move(config), std::move(weights), *experts_, *kernels_);
}

KvCache Engine::new_cache() {
  return model_->make_cache(profile_.kv_cache, profile_.max_context, &budget_);
}

}  // namespace glmrt
