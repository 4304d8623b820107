// `glmrt profile check FILE`: loads a profile strictly and resolves its
// plugins (which also makes each plugin check its settings).
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/profile/byte_size.h>
#include <glmrt/profile/profile.h>

#include <cstdio>

namespace glmrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: glmrt profile check FILE\n"
    "  loads FILE strictly (unknown keys, wrong types and out-of-range values are errors)\n"
    "  and checks that its plugins exist, are of the right kind, match the ABI, run on\n"
    "  this CPU and accept their settings.\n";

std::string plugin_line(const PluginChoice& choice, const PluginInfo& created) {
  const std::filesystem::path& path = created.path;
  std::string settings;
  for (const auto& [key, value] : choice.settings)
    settings += fmt::format("{}{}={}", settings.empty() ? " {" : ", ", key, value);
  if (!settings.empty()) settings += "}";
  return fmt::format("{}{} ({})", choice.name, settings, path.string());
}

int check(const std::string& file) {
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
             precision_name(profile.expert_bits), profile.kv_cache == CacheType::f32 ? "f32" : "bf16");
  fmt::print(
      "  memory:    budget {}, expert_cache {} per layer, prefetch {}, max_context {}, prefill "
      "{}\n",
      profile.memory_budget_bytes ? format_byte_size(profile.memory_budget_bytes)
                                  : std::string("unlimited"),
      profile.expert_cache_per_layer,
      profile.prefetch_slots ? fmt::format("{} per layer", *profile.prefetch_slots)
                             : std::string("auto (the model's experts per token) per layer"),
      profile.max_context,
      profile.prefill_chunk ? fmt::format("in chunks of {}", profile.prefill_chunk)
                            : std::string("whole prompt"));
  fmt::print("  threads:   {}\n",
             profile.threads ? std::to_string(profile.threads) : std::string("all cores"));
  if (profile.model) fmt::print("  model:     {}\n", profile.model->string());
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
  if (args.size() != 2 || args[1].starts_with("-"))
    fail("glmrt profile check: expected exactly one profile file{}",
         args.size() > 1 && args[1].starts_with("-") ? fmt::format(", found option `{}`", args[1])
                                                     : std::string());
  return check(args[1]);
}

}  // namespace glmrt::cli
