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
#include <string_view>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

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
  for (const PluginInfo& p : plugins) {
    fmt::print("{:<8} {:<20} {:<9} {:<5} {:>5}  {:<9} {}\n", p.kind, p.name, p.version, p.abi,
               p.score, p.supported ? "yes" : "no", printable(p.path.string()));
    if (!p.supported && !p.reason.empty()) fmt::print("         reason: {}\n", p.reason);
  }
}

void print_json(const std::vector<PluginInfo>& plugins) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PluginInfo& p : plugins) {
    list.push_back({{"kind", p.kind},
                    {"name", p.name},
                    {"version", p.version},
                    {"abi", p.abi},
                    {"score", p.score},
                    {"supported", p.supported},
                    {"path", p.path.string()},
                    {"reason", p.reason}});
  }
  // A file name need not be UTF-8: such bytes are shown as U+FFFD.
  std::cout << list.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

std::string subcommand_names();

int list_plugins(const Args& args) {
  po::options_description options("glmrt plugins [list] [options]");
  options.add_options()("help,h", "show this help")("profile", po::value<std::string>(),
                                                    "search the profile's plugin_paths first")(
      "json", "print a JSON array of {kind,name,version,abi,score,supported,path,reason}");
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
    print_json(plugins);
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
