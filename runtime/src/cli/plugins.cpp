// `glmrt plugins`: what plugins the search path holds, whether this CPU runs
// them. Subcommands dispatch on the first word (`glmrt plugins list` is the
// default); a new one is a function and a line in kSubcommands.
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/profile/profile.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <string_view>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

/// The ggml weight types (ABI 1.5) each kernels plugin that runs here
/// supports, by path: asked of a plugin created with no settings. A plugin
/// of an older minor, or one that cannot be created, runs none.
using GgmlTypesByPlugin = std::map<std::filesystem::path, std::vector<std::string>>;

GgmlTypesByPlugin ggml_types_of(const std::vector<PluginInfo>& plugins, const PluginHost& host) {
  GgmlTypesByPlugin types;
  MemoryBudget budget;
  for (const PluginInfo& p : plugins) {
    if (p.kind != "kernels" || !p.supported) continue;
    std::vector<std::string>& names = types[p.path];
    if (p.abi_minor < GLMRT_ABI_MINOR_GGML_TYPES) continue;
    try {
      HostServices services(budget, 1);
      const PluginHandle<plugin::Kernels> kernels =
          host.create_kernels(PluginChoice{p.path.string(), {}, {}}, services);
      for (const uint32_t ggml_type : plugin::kGgmlWeightTypes) {
        glmrt_weight_format format{};
        format.struct_size = sizeof(format);
        format.element_type = plugin::ggml_element_type(ggml_type);
        format.alignment = 1;
        if (kernels->supports(format))
          names.emplace_back(plugin::element_type_name(format.element_type));
      }
    } catch (const Error&) {
      // Listed as running none; `glmrt plugins test` says why it fails.
    }
  }
  return types;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " ") + name;
  return text.empty() ? "none" : text;
}

void print_table(const std::vector<PluginInfo>& plugins, const PluginHost& host) {
  if (plugins.empty()) {
    std::string dirs;
    for (const auto& dir : host.search_dirs())
      dirs += fmt::format("\n  {}", printable(dir.string()));
    fmt::print("no plugins found; searched:{}\n", dirs);
    return;
  }
  fmt::print("{:<8} {:<20} {:<9} {:<5} {:>5}  {:<9} {}\n", "KIND", "NAME", "VERSION", "ABI",
             "SCORE", "SUPPORTED", "PATH");
  const GgmlTypesByPlugin ggml_types = ggml_types_of(plugins, host);
  for (const PluginInfo& p : plugins) {
    fmt::print("{:<8} {:<20} {:<9} {:<5} {:>5}  {:<9} {}\n", p.kind, p.name, p.version, p.abi,
               p.score, p.supported ? "yes" : "no", printable(p.path.string()));
    // The probe's note: why a plugin does not run, or what a running one uses
    // on this CPU (kernels-avx2: which int8 dot path).
    if (!p.reason.empty())
      fmt::print("         {}: {}\n", p.supported ? "features" : "reason", p.reason);
    if (const auto it = ggml_types.find(p.path); it != ggml_types.end())
      fmt::print("         ggml types: {}\n", joined(it->second));
  }
}

void print_json(const std::vector<PluginInfo>& plugins, const PluginHost& host) {
  const GgmlTypesByPlugin ggml_types = ggml_types_of(plugins, host);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PluginInfo& p : plugins) {
    nlohmann::ordered_json entry = {{"kind", p.kind},          {"name", p.name},
                                    {"version", p.version},    {"abi", p.abi},
                                    {"score", p.score},        {"supported", p.supported},
                                    {"path", p.path.string()}, {"reason", p.reason}};
    if (const auto it = ggml_types.find(p.path); it != ggml_types.end())
      entry["ggml_types"] = it->second;
    list.push_back(std::move(entry));
  }
  // A file name need not be UTF-8: such bytes are shown as U+FFFD.
  std::cout << list.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

std::string subcommand_names();

int list_plugins(const Args& args) {
  po::options_description options("glmrt plugins [list] [options]");
  options.add_options()("help,h", "show this help")("profile", po::value<std::string>(),
                                                    "search the profile's plugin_paths first")(
      "json",
      "print a JSON array of {kind,name,version,abi,score,supported,path,reason}, and for a "
      "kernels plugin that runs here ggml_types: the ggml weight types it multiplies");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << options << "\nsubcommands:" << subcommand_names()
              << " (list is the default; `glmrt plugins <subcommand> --help`)\n";
    return 0;
  }
  const Profile profile =
      vm.count("profile") ? load_profile(vm["profile"].as<std::string>()) : Profile{};
  const PluginHost host(profile);
  const std::vector<PluginInfo> plugins = host.discover();
  if (vm.count("json"))
    print_json(plugins, host);
  else
    print_table(plugins, host);
  return 0;
}

struct Subcommand {
  std::string_view name;
  int (*run)(const Args&);
};

constexpr Subcommand kSubcommands[] = {
    {"list", list_plugins},
    {"test", plugins_test_command},
};

std::string subcommand_names() {
  std::string names;
  for (const Subcommand& sub : kSubcommands) names += fmt::format(" {}", sub.name);
  return names;
}

}  // namespace

int plugins_command(const Args& args) {
  if (!args.empty() && !args[0].starts_with("-")) {
    for (const Subcommand& sub : kSubcommands)
      if (args[0] == sub.name) return sub.run(Args(args.begin() + 1, args.end()));
    fail("glmrt plugins: unknown subcommand `{}` (available:{})", args[0], subcommand_names());
  }
  try {
    return list_plugins(args);
  } catch (const po::error& e) {
    fail("glmrt plugins: {}", e.what());
  }
}

}  // namespace glmrt::cli
