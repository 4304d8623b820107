// One plugin shared object, loaded and checked: the entry point's symbol
// type, the descriptor's size, ABI major and fields are verified before
// anything in it is called (descriptor_check.h). Messages quote the file
// name escaped (glmrt/base/printable.h): a file name may hold escapes.
#pragma once

#include <glmrt/host/plugin_host.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace glmrt {

/// "kernels", "io", "draft" (or "unknown kind N").
std::string plugin_kind_name(uint32_t kind);

class LoadedLibrary {
 public:
  /// Loads `file`; throws glmrt::Error naming it when it cannot be loaded, has no
  /// glmrt_plugin_describe function, or a malformed descriptor (another ABI
  /// major, a size out of bounds, an unknown kind, missing or stray fields).
  explicit LoadedLibrary(const std::filesystem::path& file);
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const glmrt_plugin_descriptor& descriptor() const { return *descriptor_; }

  /// Throws naming the file when the plugin is of another kind than `expected`,
  /// or is a draft plugin built for an ABI minor older than the draft contract.
  void require_kind(glmrt_plugin_kind expected) const;

  /// Runs the probe; what `glmrt plugins` lists. Its texts are printable (the
  /// probe's reason and the description escaped); throws when the probe's
  /// reason is not terminated within its array.
  PluginInfo describe() const;

  /// Calls the plugin's factory with the profile's settings; throws naming the
  /// file and the plugin's own message when it refuses.
  void* create(const HostServices& host, const std::map<std::string, std::string>& settings) const;

 private:
  std::filesystem::path path_;
  std::string shown_path_;  // path_ as messages quote it
  boost::dll::shared_library library_;
  const glmrt_plugin_descriptor* descriptor_ = nullptr;
};

}  // namespace glmrt
