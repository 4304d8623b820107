// `glmrt profile check FILE`: loads a profile strictly and resolves its
// plugins (which also makes each plugin check its settings).
#include "commands.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/usage_history.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/memory/memory_plan.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>

#include <cstdio>

namespace glmrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: glmrt profile check FILE [--model DIR]\n"
    "  loads FILE strictly (unknown keys, wrong types and out-of-range values are errors)\n"
    "  and checks that its plugins exist, are of the right kind, match the ABI, run on\n"
    "  this CPU and accept their settings. With a model (--model, or the profile's\n"
    "  `model`), also works out where the memory goes under the budget, from the\n"
    "  model's headers alone, and fails when the budget is below the minimum.\n";

std::string plugin_line(const PluginChoice& choice, const PluginInfo& created) {
  const std::filesystem::path& path = created.path;
  std::string settings;
  for (const auto& [key, value] : choice.settings)
    settings += fmt::format("{}{}={}", settings.empty() ? " {" : ", ", key, value);
  if (!settings.empty()) settings += "}";
  return fmt::format("{}{} ({})", choice.name, settings, path.string());
}

void print_memory_plan(const Profile& profile, const std::filesystem::path& model) {
  const TensorDirectory tensors = TensorDirectory::open(model);
  const ModelConfig config = load_model_config(model, tensors);
  // As the engine would plan it, from the settings it would resolve: the
  // pinned set is at most what the history ranks.
  const RunSettings settings = resolve_run_settings(profile, config);
  MemoryPlanInputs inputs{current_rss_bytes(), measure_available_memory(), uint64_t{0}};
  if (settings.history_folder) {
    const UsageHistory history(settings.history_folder, model_id(model, tensors),
                               settings.history_rows, config.n_routed_experts);
    inputs.pinnable_experts = history.totals().ranked().size();
  }
  const MemoryPlan plan = plan_memory(profile, settings, config, tensors, inputs);
  fmt::print(
      "  resolved:  {} threads, prefetch {} per layer{}, expert_cache {} per layer{}, history {}\n",
      settings.threads, settings.prefetch_slots,
      settings.prefetch_auto ? " (auto: each layer's depth chosen as it runs)" : "",
      plan.cache_per_layer, plan.cache_auto ? " (auto)" : "",
      settings.history_folder ? settings.history_folder->string() : std::string("off"));
  fmt::print("  memory plan for {} (one expert {} in memory, {} read; {} MoE layers):\n{}",
             model.string(), format_byte_size(plan.expert_bytes),
             format_byte_size(plan.expert_read_bytes), plan.moe_layers, plan.table());
  if (plan.prefill_chunk_from_budget)
    fmt::print(
        "  prefill:   in chunks of {} positions (memory.prefill_chunk 0 asks for the whole prompt, "
        "which does not fit the budget)\n",
        plan.prefill_chunk);
}

int check(const std::string& file, const std::string& model_dir) {
  const Profile profile = load_profile(file);
  const PluginHost host(profile);
  const ProfilePlugins plugins = host.check_profile(profile);
  fmt::print("{}: ok\n", file);
  fmt::print("  kernels:   {}\n", plugin_line(profile.kernels, plugins.kernels));
  fmt::print("  io:        {}\n", plugin_line(profile.io, plugins.io));
  fmt::print("  draft:     {}\n",
             profile.draft && plugins.draft
                 ? fmt::format("{}, up to {} tokens", plugin_line(*profile.draft, *plugins.draft),
                               profile.max_draft_tokens)
                 : std::string("none"));
  fmt::print("  precision: dense {}, experts {}, kv_cache {}\n", precision_name(profile.dense_bits),
             precision_name(profile.expert_bits),
             profile.kv_cache == CacheType::f32 ? "f32" : "bf16");
  const std::string budget = profile.memory_budget_auto ? std::string("auto")
                             : profile.memory_budget_bytes
                                 ? format_byte_size(profile.memory_budget_bytes)
                                 : std::string("unlimited");
  const std::string pinned = !profile.pinned_bytes   ? std::string("auto")
                             : *profile.pinned_bytes ? format_byte_size(*profile.pinned_bytes)
                                                     : std::string("off");
  fmt::print(
      "  memory:    budget {}, expert_cache {}, pinned {}, prefetch {}, max_context {}, prefill "
      "{}, kv_slots {}\n",
      budget,
      profile.expert_cache_auto ? std::string("auto")
                                : fmt::format("{} per layer", profile.expert_cache_per_layer),
      pinned,
      profile.prefetch_slots
          ? fmt::format("{} per layer", *profile.prefetch_slots)
          : std::string("auto (the model's experts per token slots per layer, each "
                        "layer's depth from measured accuracy and read cost)"),
      profile.max_context,
      profile.prefill_chunk ? fmt::format("in chunks of {}", profile.prefill_chunk)
                            : std::string("whole prompt"),
      profile.kv_slots
          ? std::to_string(*profile.kv_slots)
          : fmt::format("auto ({}: one per {} tokens of max_context, at most {})",
                        effective_kv_slots(profile), kTokensPerAutoKvSlot, kMaxAutoKvSlots));
  fmt::print("  threads:   {}\n",
             profile.threads ? std::to_string(profile.threads) : std::string("all cores"));
  if (profile.model) fmt::print("  model:     {}\n", profile.model->string());
  fmt::print("  history:   {}\n", !profile.history ? std::string("off")
                                  : profile.history_folder
                                      ? profile.history_folder->string()
                                      : std::string("$XDG_CACHE_HOME/glmrt (~/.cache/glmrt)"));
  if (!model_dir.empty())
    print_memory_plan(profile, model_dir);
  else if (profile.model)
    print_memory_plan(profile, *profile.model);
  return 0;
}

}  // namespace

int profile_command(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "check")
    fail("glmrt profile: unknown subcommand `{}` (available: check)", args[0]);
  if (args.size() == 2 && (args[1] == "--help" || args[1] == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string file, model;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--model" && i + 1 < args.size()) {
      model = args[++i];
    } else if (args[i].starts_with("--model=")) {
      model = args[i].substr(8);
    } else if (args[i].starts_with("-")) {
      fail("glmrt profile check: unknown option `{}` (expected FILE [--model DIR])", args[i]);
    } else if (file.empty()) {
      file = args[i];
    } else {
      fail("glmrt profile check: expected exactly one profile file, found `{}` and `{}`", file,
           args[i]);
    }
  }
  if (file.empty()) fail("glmrt profile check: expected exactly one profile file");
  return check(file, model);
}

}  // namespace glmrt::cli
