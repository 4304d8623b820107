#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/engine/engine.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/model_files/tensor_usage.h>
#include <glmrt/weights/tensor_loader.h>

#include <omp.h>

#include <chrono>
#include <cstdio>

namespace glmrt {
namespace {

// A container stores tensors at one precision; a profile asking for another
// gets them converted, which costs load time and changes the numbers: say so.
void note_requantized(const LoadSummary& summary, const Profile& profile) {
  const auto& names = summary.requantized;
  if (names.empty()) return;
  constexpr size_t kShown = 4;
  std::string list;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > kShown) list += fmt::format(" and {} more", names.size() - kShown);
  std::fprintf(stderr,
               "glmrt: note: %zu pre-quantized tensor(s) converted to the precision profile %s "
               "asks for: %s\n",
               names.size(), profile.file.string().c_str(), list.c_str());
}

}  // namespace

int effective_threads(const Profile& profile) {
  return profile.threads > 0 ? profile.threads : omp_get_num_procs();
}

int effective_prefetch_slots(const Profile& profile, int experts_per_token) {
  return profile.prefetch_slots ? *profile.prefetch_slots : experts_per_token;
}

namespace {

// Positions past what the model was trained on run, but their outputs are
// not what the model was made for.
void warn_if_context_exceeds_training(const Profile& profile, const ModelConfig& config) {
  if (profile.max_context > config.max_position_embeddings)
    warn(
        "{}: memory.max_context is {}, above the model's max_position_embeddings {} ({}): "
        "positions past {} were never trained",
        profile.file.empty() ? std::string("the profile") : profile.file.string(),
        profile.max_context, config.max_position_embeddings, config.file,
        config.max_position_embeddings);
}

void mark_expert_tensors(const std::vector<std::vector<ExpertLayout>>& layouts,
                         TensorUsage& usage) {
  for (const auto& layer : layouts)
    for (const ExpertLayout& expert : layer)
      for (const ExpertTensorPlace& place : expert.tensors) {
        if (place.values) usage.mark(*place.values);
        if (place.scales) usage.mark(*place.scales);
      }
}

}  // namespace

std::unique_ptr<Engine> Engine::open(const Profile& profile,
                                     const std::filesystem::path& model_dir) {
  std::filesystem::path dir = model_dir;
  if (dir.empty()) {
    if (!profile.model)
      fail("no model: pass --model DIR or set `model:` in the profile {}", profile.file);
    dir = *profile.model;
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Engine> engine(new Engine(profile, dir));
  engine->open_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return engine;
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
  ModelConfig config = load_model_config(model_dir_, tensors_);
  warn_if_context_exceeds_training(profile_, config);
  const int layers_with_mtp =
      config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0);
  TensorUsage usage(tensors_);
  TensorLoader loader(tensors_, &budget_, &usage);
  ModelWeights weights = load_model_weights(config, loader, profile_);
  load_ = loader.summary();
  note_requantized(load_, profile_);
  const int expert_layers = weights.mtp ? layers_with_mtp : config.num_hidden_layers;
  auto expert_layouts = plan_expert_layouts(config, tensors_, expert_layers);
  mark_expert_tensors(expert_layouts, usage);
  usage.warn_unused(model_dir_);
  io_channel_ = std::make_unique<IoChannel>(*io_, io_.info().abi_minor, tensors_.files());
  const ExpertPoolSizes pools{profile_.expert_cache_per_layer,
                              effective_prefetch_slots(profile_, config.num_experts_per_tok)};
  experts_ =
      std::make_unique<ExpertStore>(std::move(expert_layouts), *io_channel_, profile_.expert_bits,
                                    pools, &budget_, services_.n_threads());
  model_ = std::make_unique<Model>(std::move(config), std::move(weights), *experts_, *kernels_);
  if (services_.n_threads() > 1) {
    lane_services_ = std::make_unique<HostServices>(budget_, 1);
    std::vector<plugin::Kernels*> lanes;
    for (int t = 0; t < services_.n_threads(); ++t) {
      lanes_.push_back(host_.create_kernels(profile_.kernels, *lane_services_));
      lanes.push_back(&*lanes_.back());
    }
    model_->set_kernel_lanes(std::move(lanes));
  }
}

KvCache Engine::new_cache() {
  return model_->make_cache(profile_.kv_cache, profile_.max_context, &budget_);
}

}  // namespace glmrt
