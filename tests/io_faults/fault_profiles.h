// Engines for the fault tests: a profile written as YAML (so plugins.io and
// its settings go through the real loader) naming the io plugin by name or
// by path, over glm_tiny or a generated checkpoint.
#pragma once

#include <glmrt/engine/engine.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace glmrt::test {

inline const std::filesystem::path kTinyModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";
inline const std::filesystem::path kFaultIoPlugin = GLMRT_FAULT_IO_PLUGIN;
/// The same plugin declaring ABI 1.0: the host calls read() only.
inline const std::filesystem::path kFaultIo10Plugin = GLMRT_FAULT_IO_1_0_PLUGIN;
/// The same plugin declaring ABI 1.4: no urgent reads, no cancellation.
inline const std::filesystem::path kFaultIo14Plugin = GLMRT_FAULT_IO_1_4_PLUGIN;

struct EngineSpec {
  std::string io = kFaultIoPlugin.string();  // a plugin name or a path
  std::map<std::string, std::string> io_settings;
  std::string expert_precision = "f32";
  /// Small, so decode steps read experts too (a token routes to 4 of 16), and
  /// holds the 3 experts the tests acquire at once.
  int expert_cache = 3;
  /// memory.prefetch: off by default here, so every read is one a step asked
  /// for and read numbers match between a clean and a faulty run.
  std::string prefetch = "0";
};

/// io-buffered, experts converted to `expert_precision`.
inline EngineSpec clean_spec(std::string expert_precision = "f32") {
  EngineSpec spec;
  spec.io = "io-buffered";
  spec.expert_precision = std::move(expert_precision);
  return spec;
}

/// fault-io with these settings (`abi_1_0`: its copy declaring ABI 1.0).
inline EngineSpec fault_spec(std::map<std::string, std::string> settings, bool abi_1_0 = false) {
  EngineSpec spec;
  spec.io_settings = std::move(settings);
  if (abi_1_0) spec.io = kFaultIo10Plugin.string();
  return spec;
}

/// Writes `spec` as `dir`/NAME.yaml (kernels-scalar, 2 threads) and loads it,
/// with this build's plugin folder searched first.
Profile write_profile(const std::filesystem::path& dir, const std::string& name,
                      const EngineSpec& spec);

std::unique_ptr<Engine> open_engine(const std::filesystem::path& scratch, const std::string& name,
                                    const EngineSpec& spec,
                                    const std::filesystem::path& model = kTinyModel);

}  // namespace glmrt::test
