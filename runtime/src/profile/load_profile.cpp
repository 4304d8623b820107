// The strict profile loader. The schema is documented in docs/profiles.md;
// keep the two in step.
#include "yaml_documents.h"
#include "yaml_fields.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/base/warning.h>
#include <glmrt/profile/profile.h>
#include <glmrt/profile/sampling_ranges.h>

#include <limits>
#include <optional>
#include <vector>

#include <yaml-cpp/depthguard.h>

namespace glmrt {
namespace {

using yaml_strict::Field;
using yaml_strict::Mapping;

/// Reads one file's profile; knows the folder relative paths resolve against.
class ProfileReader {
 public:
  explicit ProfileReader(const std::filesystem::path& file)
      : file_(file), display_(file.string()), folder_(file.parent_path()) {}

  Profile read(const YAML::Node& root) const {
    if (!root.IsMap())
      yaml_strict::fail_at(display_, root.Mark(), "",
                           fmt::format("expected a mapping of profile keys (plugins, precision, "
                                       "memory, ...), found {}",
                                       yaml_strict::describe(root)));
    Mapping top(display_, root, "",
                {{"model", "chat_template", "plugin_paths", "plugins", "threads", "precision",
                  "memory", "routing", "generation", "validate", "distributed"}});
    Profile profile;
    profile.file = file_;
    if (auto model = top.find("model")) profile.model = resolve_path(*model);
    if (auto chat_template = top.find("chat_template"))
      profile.chat_template = read_chat_template_choice(*chat_template);
    if (auto paths = top.find("plugin_paths"))
      for (const Field& element : paths->as_sequence())
        profile.plugin_paths.push_back(checked_plugin_folder(element));
    read_plugins(top.require("plugins"), profile);
    if (auto threads = top.find("threads"))
      profile.threads = static_cast<int>(threads->as_int(0, 1024));
    if (auto precision = top.find("precision")) read_precision(*precision, profile);
    if (auto memory = top.find("memory")) read_memory(*memory, profile);
    if (auto routing = top.find("routing")) read_routing(*routing, profile.routing);
    if (auto generation = top.find("generation")) read_generation(*generation, profile.generation);
    if (auto validate = top.find("validate")) read_validate(*validate, profile.validate);
    if (auto distributed = top.find("distributed"))
      read_distributed(*distributed, profile.distributed);
    return profile;
  }

 private:
  std::filesystem::path resolve_path(const Field& field) const {
    std::string text = field.as_string();
    if (text.empty()) field.fail("expected a path, found an empty text");
    return std::filesystem::absolute(folder_ / text).lexically_normal();
  }

  static text::ChatTemplateChoice read_chat_template_choice(const Field& field) {
    const std::string name = field.as_string();
    if (const auto choice = text::chat_template_choice_named(name)) return *choice;
    field.fail(fmt::format("expected `model` or `builtin`, found `{}`", printable(name, 64)));
  }

  // A folder that does not exist is searched as an empty one (the others may
  // hold every plugin), but a typo there would otherwise go unnoticed.
  std::filesystem::path checked_plugin_folder(const Field& field) const {
    std::filesystem::path folder = resolve_path(field);
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec))
      warn("{}: key `{}`: {} is not a folder{}; no plugins are found there", field.origin(),
           field.path(), folder.string(),
           std::filesystem::exists(folder, ec) ? "" : " (it does not exist)");
    return folder;
  }

  /// A plugin setting reaches the plugin as text: a scalar as written, a list
  /// of scalars as its entries one per line (e.g. io's `mirrors`).
  static std::string setting_value(const Field& setting) {
    if (!setting.node().IsSequence()) return setting.as_string();
    std::string joined;
    for (const Field& entry : setting.as_sequence()) {
      const std::string text = entry.as_string();
      if (text.find('\n') != std::string::npos)
        entry.fail("expected one line of text per list entry, found a line break");
      if (!joined.empty()) joined += '\n';
      joined += text;
    }
    if (joined.empty()) setting.fail("expected a list with at least one entry, found an empty one");
    return joined;
  }

  /// A plugin is chosen by a name, "auto", a path (contains '/' or ends in .so)
  /// or a mapping {name: ..., settings: {key: value}}.
  PluginChoice read_choice(const Field& field, bool allow_auto) const {
    PluginChoice choice;
    choice.origin = field.origin();
    Field name_field = field;
    if (field.node().IsMap()) {
      Mapping map = field.as_mapping({"name", "settings"});
      name_field = map.require("name");
      if (auto settings = map.find("settings")) {
        const Mapping settings_map = settings->as_free_mapping();
        for (const Field& setting : settings_map.entries())
          choice.settings[setting.key()] = setting_value(setting);
      }
    } else if (!field.node().IsScalar()) {
      field.fail(
          fmt::format("expected a plugin name, `auto`, a path to a .so or a mapping "
                      "{{name: ..., settings: {{...}}}}, found {}",
                      yaml_strict::describe(field.node())));
    }
    choice.name = name_field.as_string();
    if (choice.name.empty()) name_field.fail("expected a plugin name, found an empty text");
    if (choice.name == "auto" && !allow_auto)
      name_field.fail("`auto` chooses among kernels plugins only; name the plugin");
    if (choice.name == "none")
      name_field.fail("this plugin is required; `none` is accepted for plugins.draft only");
    const bool is_path = choice.name.find('/') != std::string::npos ||
                         (choice.name.size() > 3 && choice.name.ends_with(".so"));
    if (is_path) choice.name = resolve_path(name_field).string();
    return choice;
  }

  void read_plugins(const Field& field, Profile& profile) const {
    Mapping plugins = field.as_mapping(
        {"kernels", "io", "draft", "max_draft_tokens", "draft_min_tokens", "draft_adaptive"});
    profile.kernels = read_choice(plugins.require("kernels"), true);
    profile.io = read_choice(plugins.require("io"), false);
    if (auto draft = plugins.find("draft")) {
      if (draft->node().IsScalar() && draft->node().Scalar() == "none")
        profile.draft.reset();
      else
        profile.draft = read_choice(*draft, false);
    }
    if (auto max_draft = plugins.find("max_draft_tokens"))
      profile.max_draft_tokens = static_cast<int>(max_draft->as_int(1, 16));
    if (auto min_draft = plugins.find("draft_min_tokens")) {
      profile.draft_min_tokens = static_cast<int>(min_draft->as_int(1, 16));
      if (profile.draft_min_tokens > profile.max_draft_tokens)
        min_draft->fail(fmt::format("draft_min_tokens {} exceeds max_draft_tokens {}",
                                    profile.draft_min_tokens, profile.max_draft_tokens));
    }
    if (auto adaptive = plugins.find("draft_adaptive"))
      profile.draft_adaptive = adaptive->as_bool();
  }

  static WeightPrecision read_weight_bits(const Field& field) {
    const std::string text = field.as_string();
    if (text == "stored") return WeightPrecision::as_stored();
    std::string why;
    if (auto p = parse_precision(text, &why)) return *p;
    const bool group_problem =
        why.find("group") != std::string::npos || why.find("two-level") != std::string::npos;
    field.fail(fmt::format(
        "expected f32, bf16, int8, int4, int3 or int2 (or 32/16/8/4/3/2), a per-group form such as "
        "int4-g64, a two-level int4-k32, int3-k32 or int2-k16, or stored (each weight as its file "
        "stores it), found `{}`{}",
        text, group_problem ? " (" + why + ")" : std::string()));
  }

  static void read_precision(const Field& field, Profile& profile) {
    Mapping precision = field.as_mapping({"dense", "experts", "kv_cache"});
    if (auto dense = precision.find("dense")) profile.dense_bits = read_weight_bits(*dense);
    if (auto experts = precision.find("experts")) profile.expert_bits = read_weight_bits(*experts);
    if (auto kv = precision.find("kv_cache")) {
      const std::string text = kv->as_string();
      if (text == "f32" || text == "32")
        profile.kv_cache = CacheType::f32;
      else if (text == "bf16" || text == "16")
        profile.kv_cache = CacheType::bf16;
      else
        kv->fail(fmt::format("expected f32 or bf16, found `{}`", text));
    }
  }

  static bool is_word(const Field& field, std::string_view word) {
    return field.node().IsScalar() && field.node().Scalar() == word;
  }

  static uint64_t read_byte_size(const Field& field) {
    try {
      return parse_byte_size(field.as_string());
    } catch (const Error& e) {
      field.fail(e.what());
    }
  }

  void read_memory(const Field& field, Profile& profile) const {
    Mapping memory =
        field.as_mapping({"budget", "expert_cache", "prefetch", "max_context", "prefill_chunk",
                          "kv_slots", "pinned", "mlock", "history", "verify_checksums"});
    if (auto budget = memory.find("budget")) {
      profile.memory_budget_auto = is_word(*budget, "auto");
      if (!profile.memory_budget_auto) profile.memory_budget_bytes = read_byte_size(*budget);
    }
    if (auto cache = memory.find("expert_cache")) {
      profile.expert_cache_auto = is_word(*cache, "auto");
      if (!profile.expert_cache_auto)
        profile.expert_cache_per_layer = static_cast<int>(cache->as_int(0, 4096));
    }
    if (auto prefetch = memory.find("prefetch")) {
      if (is_word(*prefetch, "auto"))
        profile.prefetch_slots.reset();
      else
        profile.prefetch_slots = static_cast<int>(prefetch->as_int(0, 4096));
    }
    if (auto context = memory.find("max_context"))
      profile.max_context = static_cast<int>(context->as_int(16, 1048576));
    if (auto chunk = memory.find("prefill_chunk"))
      profile.prefill_chunk = static_cast<int>(chunk->as_int(0, 1048576));
    if (auto slots = memory.find("kv_slots")) {
      if (is_word(*slots, "auto"))
        profile.kv_slots.reset();
      else
        profile.kv_slots = static_cast<int>(slots->as_int(1, kMaxKvSlots));
    }
    if (auto pinned = memory.find("pinned")) {
      if (is_word(*pinned, "auto"))
        profile.pinned_bytes.reset();
      else
        profile.pinned_bytes = read_byte_size(*pinned);
    }
    if (auto lock = memory.find("mlock")) profile.mlock_pinned = lock->as_bool();
    if (auto verify = memory.find("verify_checksums")) profile.verify_checksums = verify->as_bool();
    if (auto history = memory.find("history")) {
      if (is_word(*history, "off") || is_word(*history, "false")) {
        profile.history = false;
      } else if (!is_word(*history, "on") && !is_word(*history, "true")) {
        profile.history_folder = resolve_path(*history);
      }
    }
  }

  // Ranges are the ones the flags and generation_config.json are held to.
  static void read_generation(const Field& field, GenerationDefaults& generation) {
    std::vector<std::string_view> keys;
    for (const SamplingRange& range : sampling_ranges()) keys.push_back(range.key);
    keys.push_back("seed");
    Mapping map = field.as_mapping(keys);
    auto read = [&](SamplingSetting setting) -> std::optional<double> {
      const auto f = map.find(sampling_range(setting).key);
      if (!f) return std::nullopt;
      const double value = f->as_finite_number();
      if (auto error = sampling_value_error(setting, value)) f->fail(*error);
      return value;
    };
    using S = SamplingSetting;
    generation.temperature = read(S::temperature);
    generation.top_p = read(S::top_p);
    if (auto v = read(S::top_k)) generation.top_k = static_cast<int>(*v);
    generation.min_p = read(S::min_p);
    generation.repetition_penalty = read(S::repetition_penalty);
    generation.presence_penalty = read(S::presence_penalty);
    generation.frequency_penalty = read(S::frequency_penalty);
    if (auto f = map.find("seed")) generation.seed = f->as_uint64();
    if (auto v = read(S::max_new_tokens)) generation.max_new_tokens = static_cast<int>(*v);
  }

  static void read_routing(const Field& field, RoutingSettings& routing) {
    Mapping map = field.as_mapping({"cache_bias"});
    if (auto f = map.find("cache_bias")) {
      const double x = f->as_finite_number();
      if (x < 0)
        f->fail(fmt::format(
            "expected a number >= 0 (0 = exact routing; X lets an expert in RAM replace a "
            "selected one whose score is within X), found {}",
            x));
      routing.cache_bias = x;
    }
  }

  static void read_validate(const Field& field, ValidateThresholds& validate) {
    constexpr double kLarge = std::numeric_limits<float>::max();
    Mapping map =
        field.as_mapping({"min_top1", "max_kl", "max_dlogit", "min_margin", "greedy_identical"});
    if (auto f = map.find("min_top1")) validate.min_top1 = f->as_double(0, 1);
    if (auto f = map.find("max_kl")) validate.max_kl = f->as_double(0, kLarge);
    if (auto f = map.find("max_dlogit")) validate.max_dlogit = f->as_double(0, kLarge);
    if (auto f = map.find("min_margin")) validate.min_margin = f->as_double(0, kLarge);
    if (auto f = map.find("greedy_identical")) validate.greedy_identical = f->as_bool();
  }

  static void read_distributed(const Field& field, DistributedSettings& d) {
    Mapping map =
        field.as_mapping({"shard", "placement", "wire", "rank0_experts", "timeout_seconds"});
    if (auto f = map.find("shard")) {
      if (is_word(*f, "usage"))
        d.shard = DistributedSettings::Shard::usage;
      else if (is_word(*f, "id"))
        d.shard = DistributedSettings::Shard::id;
      else
        f->fail(fmt::format("expected `usage` or `id`, found `{}`", printable(f->as_string(), 64)));
    }
    if (auto f = map.find("placement")) {
      if (is_word(*f, "shard"))
        d.placement = DistributedSettings::Placement::shard;
      else if (is_word(*f, "least_loaded"))
        d.placement = DistributedSettings::Placement::least_loaded;
      else
        f->fail(fmt::format("expected `shard` or `least_loaded`, found `{}`",
                            printable(f->as_string(), 64)));
    }
    if (auto f = map.find("wire")) {
      if (is_word(*f, "auto"))
        d.wire = DistributedSettings::Wire::automatic;
      else if (is_word(*f, "f32"))
        d.wire = DistributedSettings::Wire::f32;
      else if (is_word(*f, "bf16"))
        d.wire = DistributedSettings::Wire::bf16;
      else
        f->fail(fmt::format("expected `auto`, `f32` or `bf16`, found `{}`",
                            printable(f->as_string(), 64)));
    }
    if (auto f = map.find("rank0_experts")) d.rank0_experts = f->as_bool();
    if (auto f = map.find("timeout_seconds")) d.timeout_seconds = f->as_double(0.1, 86400);
  }

  std::filesystem::path file_;
  std::string display_;
  std::filesystem::path folder_;
};

}  // namespace

Profile load_profile(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, input_kinds::profile);
  YAML::Node root;
  std::optional<YAML::Mark> second;
  try {
    root = YAML::Load(text);
    second = yaml_strict::second_document(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    fail(
        "{}:{}: invalid YAML: mappings and sequences nest too deeply (the parser gave up {} "
        "levels deep)",
        file.string(), e.mark.line + 1, e.depth());
  } catch (const YAML::Exception& e) {
    fail("{}:{}: invalid YAML: {}", file.string(), e.mark.line + 1, e.msg);
  }
  // A second document (after `---`) would be ignored: the user meant one of them.
  if (second)
    fail(
        "{}:{}: a profile is one YAML document; this file holds more than one (a second one "
        "begins here, after `---`)",
        file.string(), second->line < 0 ? 1 : second->line + 1);
  return ProfileReader(file).read(root);
}

}  // namespace glmrt
