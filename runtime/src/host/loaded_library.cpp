#include "loaded_library.h"

#include <glmrt/base/error.h>

#include <cstddef>
#include <exception>
#include <vector>

namespace glmrt {
namespace {

// Bytes of the descriptor that hold struct_size and the ABI version: enough
// to tell a plugin of another major apart before trusting the rest.
constexpr uint32_t kVersionPrefixBytes = offsetof(glmrt_plugin_descriptor, kind);

}  // namespace

std::string plugin_kind_name(uint32_t kind) {
  switch (kind) {
    case GLMRT_PLUGIN_KERNELS:
      return "kernels";
    case GLMRT_PLUGIN_IO:
      return "io";
    case GLMRT_PLUGIN_DRAFT:
      return "draft";
    default:
      return fmt::format("unknown kind {}", kind);
  }
}

LoadedLibrary::LoadedLibrary(const std::filesystem::path& file) : path_(file) {
  const std::string name = path_.string();
  try {
    library_.load(boost::dll::fs::path(name), boost::dll::load_mode::rtld_now);
  } catch (const std::exception& e) {
    fail("{}: cannot load the shared object: {}", name, e.what());
  }
  if (!library_.has(GLMRT_PLUGIN_ENTRY_SYMBOL))
    fail("{}: not a glmrt plugin (it does not export `{}`)", name, GLMRT_PLUGIN_ENTRY_SYMBOL);
  auto describe = library_.get<const glmrt_plugin_descriptor*()>(GLMRT_PLUGIN_ENTRY_SYMBOL);
  descriptor_ = describe();
  if (!descriptor_) fail("{}: {}() returned no descriptor", name, GLMRT_PLUGIN_ENTRY_SYMBOL);
  const glmrt_plugin_descriptor& d = *descriptor_;
  if (d.struct_size < kVersionPrefixBytes)
    fail("{}: plugin descriptor is {} bytes, expected at least {}", name, d.struct_size,
         sizeof(glmrt_plugin_descriptor));
  if (d.abi_major != GLMRT_ABI_MAJOR)
    fail(
        "{}: plugin ABI mismatch: expected {}.x, found {}.{} (rebuild the plugin against this "
        "glmrt's SDK)",
        name, GLMRT_ABI_MAJOR, d.abi_major, d.abi_minor);
  if (d.struct_size < sizeof(glmrt_plugin_descriptor))
    fail("{}: plugin descriptor is {} bytes, expected at least {} for ABI {}.{}", name,
         d.struct_size, sizeof(glmrt_plugin_descriptor), d.abi_major, d.abi_minor);
  if (d.kind < GLMRT_PLUGIN_KERNELS || d.kind > GLMRT_PLUGIN_DRAFT)
    fail("{}: plugin has {}; expected kernels (1), io (2) or draft (3)", name,
         plugin_kind_name(d.kind));
  if (!d.name || !*d.name) fail("{}: plugin descriptor has no name", name);
  if (!d.probe) fail("{}: plugin descriptor has no probe function", name);
  if (!d.create) fail("{}: plugin descriptor has no create function", name);
}

void LoadedLibrary::require_kind(glmrt_plugin_kind expected) const {
  if (descriptor_->kind != static_cast<uint32_t>(expected))
    fail("{}: wrong plugin kind: expected {}, found {} (plugin `{}`)", path_.string(),
         plugin_kind_name(expected), plugin_kind_name(descriptor_->kind), descriptor_->name);
}

PluginInfo LoadedLibrary::describe() const {
  const glmrt_plugin_descriptor& d = *descriptor_;
  glmrt_probe_result probe{};
  probe.struct_size = sizeof(probe);
  d.probe(&probe);
  probe.reason[sizeof(probe.reason) - 1] = '\0';
  PluginInfo info;
  info.path = path_;
  info.kind = plugin_kind_name(d.kind);
  info.name = d.name;
  info.version = d.version ? d.version : "";
  info.abi = fmt::format("{}.{}", d.abi_major, d.abi_minor);
  info.abi_major = d.abi_major;
  info.abi_minor = d.abi_minor;
  info.description = d.description ? d.description : "";
  info.score = probe.score;
  info.supported = probe.supported != 0;
  info.reason = probe.reason;
  return info;
}

void* LoadedLibrary::create(const HostServices& host,
                            const std::map<std::string, std::string>& settings) const {
  std::vector<glmrt_setting> pairs;
  pairs.reserve(settings.size());
  for (const auto& [key, value] : settings) pairs.push_back({key.c_str(), value.c_str()});
  char error[512] = {};
  void* object = descriptor_->create(host.get(), pairs.data(), pairs.size(), error, sizeof(error));
  error[sizeof(error) - 1] = '\0';
  if (!object)
    fail("{}: plugin `{}` could not be created: {}", path_.string(), descriptor_->name,
         *error ? error : "its create() failed without a message");
  return object;
}

}  // namespace glmrt
