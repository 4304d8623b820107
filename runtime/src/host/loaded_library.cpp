#include "loaded_library.h"

#include "descriptor_check.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <cstddef>
#include <exception>
#include <vector>

namespace glmrt {

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

LoadedLibrary::LoadedLibrary(const std::filesystem::path& file)
    : path_(file), shown_path_(printable(file.string())) {
  try {
    library_.load(boost::dll::fs::path(file.string()), boost::dll::load_mode::rtld_now);
  } catch (const std::exception& e) {
    fail("{}: cannot load the shared object: {}", shown_path_, printable(e.what()));
  }
  // Nothing the plugin gave is called or followed before it is checked.
  const glmrt_describe_fn describe = checked_entry_point(library_.native(), shown_path_);
  descriptor_ = describe();
  check_descriptor(descriptor_, shown_path_);
}

void LoadedLibrary::require_kind(glmrt_plugin_kind expected) const {
  if (descriptor_->kind != static_cast<uint32_t>(expected))
    fail("{}: wrong plugin kind: expected {}, found {} (plugin `{}`)", shown_path_,
         plugin_kind_name(expected), plugin_kind_name(descriptor_->kind), descriptor_->name);
  // The draft interface of 1.0/1.1 was a declaration no host ever ran; 1.2
  // replaced it (proposals with their q, host-owned MTP rows), so an older
  // draft plugin would be called through the wrong table.
  if (expected == GLMRT_PLUGIN_DRAFT && descriptor_->abi_minor < GLMRT_ABI_MINOR_DRAFT)
    fail(
        "{}: draft plugin `{}` was built for ABI {}.{}; draft plugins need ABI {}.{} or newer "
        "(the draft contract of glmrt/plugin/draft.h): rebuild it against this glmrt's SDK",
        shown_path_, descriptor_->name, descriptor_->abi_major, descriptor_->abi_minor,
        GLMRT_ABI_MAJOR, GLMRT_ABI_MINOR_DRAFT);
}

PluginInfo LoadedLibrary::describe() const {
  const glmrt_plugin_descriptor& d = *descriptor_;
  glmrt_probe_result probe{};
  probe.struct_size = sizeof(probe);
  d.probe(&probe);
  check_probe_result(probe, shown_path_);
  PluginInfo info;
  info.path = path_;
  info.kind = plugin_kind_name(d.kind);
  info.name = d.name;
  info.version = d.version ? d.version : "";
  info.abi = fmt::format("{}.{}", d.abi_major, d.abi_minor);
  info.abi_major = d.abi_major;
  info.abi_minor = d.abi_minor;
  info.description = d.description ? printable(d.description) : "";
  info.score = probe.score;
  info.supported = probe.supported != 0;
  info.reason = printable(probe.reason);
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
    fail("{}: plugin `{}` could not be created: {}", shown_path_, descriptor_->name,
         *error ? printable(error) : "its create() failed without a message");
  return object;
}

}  // namespace glmrt
