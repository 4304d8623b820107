// `glmrt plugins test PATH`: runs the conformance suite of the plugin's kind
// (kernels: matmul against a float64 reference; io: extents of temporary
// files; draft: creation and proposals) and prints one line per check.
// Exit status: 0 all passed, 1 a check failed, 77 nothing could run here
// (the plugin does not support this CPU), 2 bad usage.
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/conformance/plugin_conformance.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

namespace glmrt::cli {

int plugins_test_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt plugins test PATH [options]");
  options.add_options()("help,h", "show this help")(
      "failures-only", "print only failed and skipped checks (and the summary)")(
      "plugin", po::value<std::string>(), "the plugin's shared object");
  po::positional_options_description positional;
  positional.add("plugin", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    fail("glmrt plugins test: {}", e.what());
  }
  if (vm.count("help") || !vm.count("plugin")) {
    std::cout << options
              << "\nexit status: 0 all checks passed, 1 a check failed, 77 the plugin does not "
                 "run on this CPU\n";
    return vm.count("help") ? 0 : 2;
  }
  const std::filesystem::path plugin = vm["plugin"].as<std::string>();
  const bool failures_only = vm.count("failures-only") > 0;

  const conformance::CheckReport report = conformance::run_plugin_conformance(plugin);
  for (const conformance::CheckResult& r : report.results()) {
    if (failures_only && r.outcome == conformance::Outcome::kPass) continue;
    fmt::print("{} {}{}{}\n", conformance::outcome_name(r.outcome), r.name,
               r.detail.empty() ? "" : ": ", r.detail);
  }
  const size_t passed = report.count(conformance::Outcome::kPass);
  const size_t failed = report.count(conformance::Outcome::kFail);
  const size_t skipped = report.count(conformance::Outcome::kSkip);
  fmt::print("{}: {} passed, {} failed, {} skipped\n", plugin.string(), passed, failed, skipped);
  if (failed > 0) return 1;
  // Only the descriptor could be checked: the plugin does not run here.
  if (passed <= 1 && skipped > 0) return 77;
  return 0;
}

}  // namespace glmrt::cli
