// `glmrt profile check FILE`: loads a profile strictly and resolves its
// plugins (which also makes each plugin check its settings).
#include "commands.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/base/printable.h>
#include <glmrt/distributed/expert_shard_plan.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/usage_history.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/memory/memory_plan.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>

#include <charconv>
#include <cstdio>
#include <iterator>

namespace glmrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: glmrt profile check FILE [--model MODEL] [--ranks N]\n"
    "  loads FILE strictly (unknown keys, wrong types and out-of-range values are errors)\n"
    "  and checks that its plugins exist, are of the right kind, match the ABI, run on\n"
    "  this CPU and accept their settings. With a model (--model, or the profile's\n"
    "  `model`), also works out where the memory goes under the budget, from the\n"
    "  model's headers alone, and fails when the budget is below the minimum.\n"
    "  --ranks N (default: the ranks under mpirun, else 1) prints the plan of each\n"
    "  rank of an expert-parallel run: rank 0 with the dense part, every rank with\n"
    "  its shard of the routed experts (docs/distributed.md).\n";

/// What `check` prints, gathered first: nothing reaches stdout when a later
/// step (the memory plan below the budget's minimum) fails.
using Report = std::string;

template <typename... Args>
void add(Report& report, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(report), format, std::forward<Args>(args)...);
}

std::string plugin_line(const PluginChoice& choice, const PluginInfo& created) {
  const std::filesystem::path& path = created.path;
  std::string settings;
  for (const auto& [key, value] : choice.settings)
    settings += fmt::format("{}{}={}", settings.empty() ? " {" : ", ", printable(key, 64),
                            printable(value, 256));
  if (!settings.empty()) settings += "}";
  return fmt::format("{}{} ({})", printable(choice.name), settings, printable(path.string()));
}

void print_plan(Report& out, const std::filesystem::path& model, const MemoryPlan& plan) {
  add(out, "  memory plan for {} (one expert {} in memory, {} read; {} MoE layers):\n{}",
      model.string(), format_byte_size(plan.expert_bytes), format_byte_size(plan.expert_read_bytes),
      plan.moe_layers, plan.table());
}

/// Each rank's plan under `ranks`-way expert parallelism, with the shards
/// rank 0 would give them (the same decision it makes at start).
void print_rank_plans(Report& out, const Profile& profile, const RunSettings& settings,
                      const ModelConfig& config, const TensorDirectory& tensors,
                      const std::filesystem::path& model, MemoryPlanInputs inputs, int ranks) {
  const ExpertAssignment shards = plan_expert_shards(profile, model, ranks);
  const int rows = config.num_hidden_layers + (checkpoint_has_mtp(config, tensors) ? 1 : 0);
  const auto layouts = plan_expert_layouts(config, tensors, rows);
  inputs.layouts = &layouts;
  add(out, "  ranks:     {} (expert parallelism; shards {})\n", ranks,
      shards.from_usage() ? "from the usage history" : "by expert id");
  for (int rank = 0; rank < ranks; ++rank) {
    inputs.rank_share = rank_share_of(rank, rank == 0, layouts, [&](int layer, int32_t expert) {
      return layer < shards.rows() && shards.owner(layer, expert) == rank;
    });
    add(out, "  rank {}:    {}; {} routed experts, at most {} of a layer\n", rank,
        rank == 0 ? "the whole model but the other ranks' experts" : "routed experts only",
        inputs.rank_share->experts_owned, inputs.rank_share->experts_per_layer);
    try {
      print_plan(out, model, plan_memory(profile, settings, config, tensors, inputs));
    } catch (const Error& e) {
      fail("rank {} of {}: {}", rank, ranks, e.what());
    }
  }
}

void print_memory_plan(Report& out, const Profile& profile, const std::filesystem::path& model,
                       int ranks) {
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
  if (ranks > 1)
    return print_rank_plans(out, profile, settings, config, tensors, model, inputs, ranks);
  const MemoryPlan plan = plan_memory(profile, settings, config, tensors, inputs);
  add(out,
      "  resolved:  {} threads, prefetch {} per layer{}, expert_cache {} per layer{}, history {}\n",
      settings.threads, settings.prefetch_slots,
      settings.prefetch_auto ? " (auto: each layer's depth chosen as it runs)" : "",
      plan.cache_per_layer, plan.cache_auto ? " (auto)" : "",
      settings.history_folder ? settings.history_folder->string() : std::string("off"));
  print_plan(out, model, plan);
  if (plan.prefill_chunk_from_budget)
    add(out,
        "  prefill:   in chunks of {} positions (memory.prefill_chunk 0 asks for the whole prompt, "
        "which does not fit the budget)\n",
        plan.prefill_chunk);
}

int check(const std::string& file, const std::string& model_dir, int ranks) {
  const Profile profile = load_profile(file);
  const PluginHost host(profile);
  const ProfilePlugins plugins = host.check_profile(profile);
  Report out;
  add(out, "{}: ok\n", file);
  add(out, "  kernels:   {}\n", plugin_line(profile.kernels, plugins.kernels));
  add(out, "  io:        {}\n", plugin_line(profile.io, plugins.io));
  add(out, "  draft:     {}\n",
      profile.draft && plugins.draft
          ? fmt::format("{}, up to {} tokens", plugin_line(*profile.draft, *plugins.draft),
                        profile.max_draft_tokens)
          : std::string("none"));
  add(out, "  precision: dense {}, experts {}, kv_cache {}\n", precision_name(profile.dense_bits),
      precision_name(profile.expert_bits), profile.kv_cache == CacheType::f32 ? "f32" : "bf16");
  const std::string budget = profile.memory_budget_auto ? std::string("auto")
                             : profile.memory_budget_bytes
                                 ? format_byte_size(profile.memory_budget_bytes)
                                 : std::string("unlimited");
  const std::string pinned = !profile.pinned_bytes   ? std::string("auto")
                             : *profile.pinned_bytes ? format_byte_size(*profile.pinned_bytes)
                                                     : std::string("off");
  add(out,
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
  add(out, "  threads:   {}\n",
      profile.threads ? std::to_string(profile.threads) : std::string("all cores"));
  if (profile.model) add(out, "  model:     {}\n", profile.model->string());
  add(out, "  history:   {}\n",
      !profile.history         ? std::string("off")
      : profile.history_folder ? profile.history_folder->string()
                               : std::string("$XDG_CACHE_HOME/glmrt (~/.cache/glmrt)"));
  if (!model_dir.empty())
    print_memory_plan(out, profile, model_dir, ranks);
  else if (profile.model)
    print_memory_plan(out, profile, *profile.model, ranks);
  else if (ranks > 1)
    fail("glmrt profile check: --ranks {} plans each rank for a model: give --model MODEL", ranks);
  fmt::print("{}", out);
  return 0;
}

}  // namespace

int profile_command(const Args& args, const Ranks& world) {
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
  int ranks = world.count();
  const auto parse_ranks = [&](const std::string& text) {
    int n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n < 1 || n > 4096)
      fail("glmrt profile check: --ranks expects a number of processes (1..4096), got `{}`", text);
    return n;
  };
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--model" && i + 1 < args.size()) {
      model = args[++i];
    } else if (args[i].starts_with("--model=")) {
      model = args[i].substr(8);
    } else if (args[i] == "--ranks" && i + 1 < args.size()) {
      ranks = parse_ranks(args[++i]);
    } else if (args[i].starts_with("--ranks=")) {
      ranks = parse_ranks(args[i].substr(8));
    } else if (args[i].starts_with("-")) {
      fail("glmrt profile check: unknown option `{}` (expected FILE [--model MODEL] [--ranks N])",
           args[i]);
    } else if (file.empty()) {
      file = args[i];
    } else {
      fail("glmrt profile check: expected exactly one profile file, found `{}` and `{}`", file,
           args[i]);
    }
  }
  if (file.empty()) fail("glmrt profile check: expected exactly one profile file");
  return check(file, model, ranks);
}

}  // namespace glmrt::cli
