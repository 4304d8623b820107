// `glmrt plugins test PATH`: read the descriptor, then run the kind's suite.
#include <glmrt/base/error.h>
#include <glmrt/conformance/kernels_conformance.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

namespace glmrt::conformance {

CheckReport run_plugin_conformance(const std::filesystem::path& plugin_file) {
  CheckReport report;
  PluginInfo info;
  try {
    info = PluginHost(std::vector<std::filesystem::path>{}).inspect(plugin_file);
    report.pass("descriptor", fmt::format("{} plugin `{}` {} (ABI {})", info.kind, info.name,
                                          info.version, info.abi));
  } catch (const Error& e) {
    report.fail("descriptor", e.what());
    return report;
  }
  if (!info.supported) {
    report.skip("supported on this CPU", info.reason);
    return report;
  }
  if (info.kind == "kernels") {
    report.append(run_kernels_conformance(plugin_file));
  } else if (info.kind == "io") {
    report.append(run_io_conformance(plugin_file));
  } else if (info.kind == "draft") {
    report.append(run_draft_conformance(plugin_file));
  } else {
    report.fail("known kind", "no conformance suite for kind " + info.kind);
  }
  return report;
}

}  // namespace glmrt::conformance
