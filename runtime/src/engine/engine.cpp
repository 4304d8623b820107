#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/base/warning.h>
#include <glmrt/engine/engine.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/pinned_choice.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/model/packed_weights.h>
#include <glmrt/model_files/container_checksums.h>
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

// memory.verify_checksums / --verify: every file read once before loading,
// and what that cost, so the user can weigh it against the load itself.
void verify_checksums(const std::filesystem::path& dir) {
  ChecksumReport r;
  try {
    r = check_container_checksums(dir);
  } catch (const Error& e) {
    fail("--verify (memory.verify_checksums): {}", e.what());
  }
  note("checksums of {} verified: {} files, {:.3f} GB in {:.2f} s ({:.2f} GB/s)", dir, r.files,
       r.bytes / 1e9, r.seconds, r.seconds > 0 ? r.bytes / 1e9 / r.seconds : 0.0);
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

/// The largest expert slot the store will plan (what its reads and the
/// kernels' layout need with this io plugin).
uint64_t largest_slot_bytes(const std::vector<std::vector<ExpertLayout>>& layouts,
                            const IoChannel& channel, const Profile& profile) {
  uint64_t largest = 0;
  for (const auto& layer : layouts)
    for (const ExpertLayout& layout : layer)
      largest =
          std::max(largest, plan_expert_slot(layout, channel, profile.expert_bits).slot_bytes);
  return largest;
}

}  // namespace

std::filesystem::path Engine::model_dir_for(const Profile& profile,
                                            const std::filesystem::path& model_dir) {
  if (!model_dir.empty()) return model_dir;
  if (!profile.model)
    fail("no model: pass --model DIR or set `model:` in the profile {}", profile.file);
  return *profile.model;
}

std::unique_ptr<Engine> Engine::open(const Profile& profile, const std::filesystem::path& model_dir,
                                     const EngineOptions& options) {
  const std::filesystem::path dir = model_dir_for(profile, model_dir);
  // Before a header is read, so a damaged file is named as such; its cost
  // is reported on its own, not in the open time.
  if (profile.verify_checksums) verify_checksums(dir);
  const auto start = std::chrono::steady_clock::now();
  // The headers first: they say which weight formats the kernels plugin
  // must run, and where every expert is, before any plugin is created.
  TensorDirectory tensors = TensorDirectory::open(dir);
  ModelConfig config = load_model_config(dir, tensors);
  const int rows = config.num_hidden_layers + (checkpoint_has_mtp(config, tensors) ? 1 : 0);
  ExpertLayouts layouts = plan_expert_layouts(config, tensors, rows);
  std::unique_ptr<Engine> engine(
      new Engine(profile, dir, std::move(tensors), std::move(config), std::move(layouts), options));
  engine->open_seconds_ = seconds_since(start);
  return engine;
}

Engine::Engine(const Profile& profile, std::filesystem::path model_dir, TensorDirectory tensors,
               ModelConfig config, ExpertLayouts layouts, const EngineOptions& options)
    : profile_(profile),
      model_dir_(std::move(model_dir)),
      config_(std::move(config)),
      settings_(resolve_run_settings(profile, config_)),
      budget_(0),
      services_(budget_, settings_.threads),
      host_(profile),
      formats_(weight_formats_in_use(profile, config_, tensors, layouts)),
      kernels_(host_.create_kernels(profile.kernels, services_, kernel_formats(formats_))),
      backend_(*kernels_, kernels_.info().abi_minor, kernels_.info().name),
      io_(host_.create_io(profile.io, services_)),
      tensors_(std::move(tensors)) {
  check_formats_supported();
  omp_set_num_threads(services_.n_threads());
  warn_if_context_exceeds_training(profile_, config_);
  if (settings_.history_folder) {
    model_id_ = glmrt::model_id(model_dir_, tensors_);
    history_.emplace(settings_.history_folder, model_id_, settings_.history_rows,
                     config_.n_routed_experts);
    routing_.add(&*history_);
  }
  // Checked before any tensor is read: a budget that cannot hold the run
  // fails now, with every part's figure, not mid-answer.
  io_channel_ = std::make_unique<IoChannel>(*io_, io_.info().abi_minor, tensors_.files());
  MemoryPlanInputs inputs{current_rss_bytes(), measure_available_memory(), uint64_t{0},
                          largest_slot_bytes(layouts, *io_channel_, profile_)};
  if (history_) inputs.pinnable_experts = history_->totals().ranked().size();
  inputs.layouts = &layouts;
  if (options.runs_expert)
    inputs.rank_share =
        rank_share_of(options.rank, !options.experts_only, layouts, options.runs_expert);
  plan_ = plan_memory(profile_, settings_, config_, tensors_, inputs);
  budget_.set_limit(plan_.budget);
  // What the budget cannot see being allocated is reserved in it: the
  // process as it was before loading, and the per-call activation buffers.
  for (const auto name : {memory_part::overhead, memory_part::activations})
    budget_.charge(std::string(name), plan_.part(name)->bytes);

  ModelWeights weights;
  if (!options.experts_only) {
    TensorUsage usage(tensors_);
    TensorLoader loader(tensors_, &budget_, &usage);
    weights = load_model_weights(config_, loader, profile_);
    load_ = loader.summary();
    const PackedWeightsSummary packed = pack_resident_weights(weights, backend_);
    load_.matrices_packed = packed.matrices;
    load_.packed_bytes = packed.bytes;
    load_.packing_seconds = packed.seconds;
    note_requantized(load_, profile_);
    mark_expert_tensors(layouts, usage);
    usage.warn_unused(model_dir_);
  }
  const ExpertPoolSizes pools{plan_.cache_per_layer, settings_.prefetch_slots,
                              settings_.prefetch_auto};
  experts_ = std::make_unique<ExpertStore>(std::move(layouts), *io_channel_, profile_.expert_bits,
                                           pools, &budget_, settings_.threads);
  if (history_ && plan_.pinned_bytes > 0) {
    std::function<bool(const ExpertKey&)> runs_here;
    if (options.runs_expert)
      runs_here = [&](const ExpertKey& k) { return options.runs_expert(k.layer, k.expert); };
    const auto keys = choose_pinned_experts(history_->totals(), plan_.pinned_bytes,
                                            plan_.expert_bytes, experts_->expert_rows(), runs_here);
    const PinnedSummary& pinned = experts_->pin(keys, profile_.mlock_pinned);
    if (!pinned.lock_refusal.empty()) warn("{}", pinned.lock_refusal);
  }
  // Faulting the slots in beside the steps, even at the lowest priority,
  // slowed decode by a fifth (docs/expert-cache.md): it is load work.
  experts_->finish_warming();
  if (options.experts_only) return;
  model_ = std::make_unique<Model>(config_, std::move(weights), *experts_, backend_);
  if (!routing_.empty()) model_->set_routing_observer(&routing_);
  model_->set_cache_bias(static_cast<float>(profile_.routing.cache_bias));
  // A drafter this checkpoint cannot serve (draft-mtp without an MTP layer)
  // is refused at load, not at the first decode step: making one checks it.
  draft_setup();
}

std::vector<glmrt_weight_format> Engine::kernel_formats(
    const std::vector<UsedWeightFormat>& formats) {
  std::vector<glmrt_weight_format> list;
  for (const UsedWeightFormat& f : formats) list.push_back(f.format());
  return list;
}

void Engine::check_formats_supported() const {
  for (const UsedWeightFormat& f : formats_)
    if (!backend_.supports(f.format()))
      fail(
          "kernels plugin `{}` ({}) does not support {} weights, which this run multiplies with "
          "({}); nothing was loaded. Choose a kernels plugin that does (`kernels: auto` picks "
          "one), or another precision in {}",
          kernels_.info().name, printable(kernels_.info().path.string()), f.name(), f.example,
          profile_.file.empty() ? std::string("the profile") : printable(profile_.file.string()));
}

Engine::~Engine() {
  if (model_) model_->set_routing_observer(nullptr);
  save_history();
}

const std::string& Engine::model_id() {
  if (model_id_.empty()) model_id_ = glmrt::model_id(model_dir_, tensors_);
  return model_id_;
}

int Engine::expert_rows() const {
  return settings_.history_rows;
}

void Engine::save_history() noexcept {
  if (!history_) return;
  try {
    history_->save();
  } catch (const std::exception& e) {
    // Once per engine: a chat would otherwise repeat it after every answer.
    // The counts stay unsaved and the next save tries again.
    if (!history_save_warned_)
      warn("expert usage history not saved (tried again after each answer): {}", e.what());
    history_save_warned_ = true;
  }
}

void Engine::record_routing(const std::filesystem::path& file, bool force) {
  if (routing_trace_) routing_.remove(routing_trace_.get());
  if (model_id_.empty()) model_id_ = glmrt::model_id(model_dir_, tensors_);
  const ModelConfig& c = model_->config();
  routing_trace_ = std::make_unique<RoutingTraceWriter>(
      file, model_id_, RoutingShape{expert_rows(), c.n_routed_experts, c.num_experts_per_tok},
      model_dir_, force);
  routing_.add(routing_trace_.get());
  model_->set_routing_observer(&routing_);
}

void Engine::finish_routing_trace() {
  if (!routing_trace_) return;
  routing_.remove(routing_trace_.get());
  const std::unique_ptr<RoutingTraceWriter> trace = std::move(routing_trace_);
  trace->close();
}

KvCache Engine::new_cache() {
  return model_->make_cache(profile_.kv_cache, profile_.max_context, &budget_);
}

DraftPolicy draft_policy(const Profile& profile) {
  return {profile.max_draft_tokens, profile.draft_min_tokens, profile.draft_adaptive};
}

std::optional<DraftSetup> Engine::draft_setup() {
  if (!profile_.draft) return std::nullopt;
  return draft_setup(*profile_.draft, draft_policy(profile_));
}

DraftSetup Engine::draft_setup(const PluginChoice& choice, DraftPolicy policy) {
  DraftSetup setup;
  setup.plugin = host_.create_draft(choice, services_);
  setup.drafter = &*setup.plugin;
  setup.requirements = setup.drafter->requirements();
  setup.policy = policy;
  setup.name = setup.plugin.info().name;
  if ((setup.requirements & GLMRT_DRAFT_NEEDS_MTP) && !model_->has_mtp())
    fail(
        "{}: key `plugins.draft`: draft plugin `{}` runs the checkpoint's MTP layer, but {} has "
        "none (config.json num_nextn_predict_layers = 0); choose another drafter or "
        "`plugins.draft: none`",
        choice.origin.empty() ? profile_.file.string() : choice.origin, setup.name, model_dir_);
  return setup;
}

}  // namespace glmrt
