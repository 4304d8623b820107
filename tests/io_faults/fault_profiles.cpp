#include "fault_profiles.h"

#include <fmt/format.h>

#include <fstream>

namespace glmrt::test {

Profile write_profile(const std::filesystem::path& dir, const std::string& name,
                      const EngineSpec& spec) {
  std::string settings;
  for (const auto& [key, value] : spec.io_settings)
    settings += fmt::format("{}{}: \"{}\"", settings.empty() ? "" : ", ", key, value);
  const std::filesystem::path file = dir / (name + ".yaml");
  std::ofstream(file) << fmt::format(
      "plugins:\n"
      "  kernels: kernels-scalar\n"
      "  io:\n"
      "    name: {}\n"
      "    settings: {{{}}}\n"
      "threads: 2\n"
      "precision: {{dense: f32, experts: {}, kv_cache: f32}}\n"
      // No pinned set: faults are numbered by read, and pinning at open
      // would read first (how many depends on the usage history).
      "memory: {{expert_cache: {}, prefetch: {}, max_context: 256, pinned: 0}}\n",
      spec.io, settings, spec.expert_precision, spec.expert_cache, spec.prefetch);
  Profile profile = load_profile(file);
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  return profile;
}

std::unique_ptr<Engine> open_engine(const std::filesystem::path& scratch, const std::string& name,
                                    const EngineSpec& spec, const std::filesystem::path& model) {
  return Engine::open(write_profile(scratch, name, spec), model);
}

}  // namespace glmrt::test
