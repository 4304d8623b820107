// Finds, checks and loads plugins (Boost.DLL). The core talks to plugins only
// through the SDK interfaces; a plugin stays loaded while anything it created
// is alive (PluginHandle holds the library).
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/plugin/plugin.h>
#include <glmrt/profile/profile.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace glmrt {

/// What `glmrt plugins` lists for one shared object. Its texts are printable
/// (a plugin's name and version are refused when they are not, its reason
/// and description are escaped); only `path` is as the file system has it.
struct PluginInfo {
  std::filesystem::path path;
  std::string kind;  // "kernels" | "io" | "draft"
  std::string name;
  std::string version;
  std::string abi;                   // "major.minor"
  int abi_major = 0, abi_minor = 0;  // the host calls only what this minor has
  std::string description;
  int score = 0;
  bool supported = false;
  std::string reason;  // why unsupported (or the probe's note)
};

/// Owns the C struct of services lent to plugins: budgeted allocation, the
/// thread count and parallel_for (OpenMP), logging to stderr, and the threads
/// plugins start for their own I/O (ABI 1.1), which it owns and counts.
class HostServices {
 public:
  HostServices(MemoryBudget& budget, int n_threads);
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;
  /// Joins any plugin thread still running (a plugin that forgot to).
  ~HostServices();
  const glmrt_host_services* get() const { return &services_; }
  int n_threads() const { return services_.n_threads; }
  /// Plugin threads running now (started and not yet joined), counted by the
  /// purpose each was started for ("io-odirect reader": 4), for the run's report.
  std::map<std::string, int> plugin_threads_by_purpose() const;

 private:
  glmrt_host_services services_{};
  MemoryBudget& budget_;
  mutable std::mutex threads_mutex_;
  struct PluginThread {
    std::thread thread;
    std::string purpose;
  };
  std::map<uint64_t, PluginThread> threads_;  // by handle
  uint64_t next_thread_ = 1;
  friend struct HostServicesAccess;
};

class LoadedLibrary;  // a dlopen'ed plugin; defined in the host's source

/// Unique owner of one object a plugin created; destroy() on release.
template <typename Interface>
class PluginHandle {
 public:
  PluginHandle() = default;
  PluginHandle(std::shared_ptr<LoadedLibrary> library, Interface* object, PluginInfo info)
      : library_(std::move(library)), object_(object), info_(std::move(info)) {}
  PluginHandle(PluginHandle&& o) noexcept
      : library_(std::move(o.library_)),
        object_(std::exchange(o.object_, nullptr)),
        info_(std::move(o.info_)) {}
  PluginHandle& operator=(PluginHandle&& o) noexcept {
    if (this != &o) {
      reset();
      library_ = std::move(o.library_);
      object_ = std::exchange(o.object_, nullptr);
      info_ = std::move(o.info_);
    }
    return *this;
  }
  ~PluginHandle() { reset(); }

  Interface* operator->() const { return object_; }
  Interface& operator*() const { return *object_; }
  explicit operator bool() const { return object_ != nullptr; }
  const PluginInfo& info() const { return info_; }

 private:
  void reset() {
    if (object_) object_->destroy();  // before the library can unload
    object_ = nullptr;
    library_.reset();
  }
  std::shared_ptr<LoadedLibrary> library_;
  Interface* object_ = nullptr;
  PluginInfo info_;
};

/// The plugins a profile's choices resolved to, as they were created.
struct ProfilePlugins {
  PluginInfo kernels, io;
  std::optional<PluginInfo> draft;
};

/// Plugins of the build's and the install's own folders (plugins/ beside the
/// executable, <prefix>/lib/glmrt/plugins) are probed in this process; any
/// other file (from profile.plugin_paths, $GLMRT_PLUGIN_PATH, a path in the
/// profile) is probed first in a child process, so that one crashing or
/// hanging in its probe is refused with the signal or the timeout as the
/// reason ($GLMRT_PLUGIN_PROBE_TIMEOUT seconds, default 10) instead of
/// taking the host down.
class PluginHost {
 public:
  /// Search order: profile.plugin_paths, then $GLMRT_PLUGIN_PATH (':'-separated),
  /// then plugins/ beside the executable, then <prefix>/lib/glmrt/plugins.
  explicit PluginHost(const Profile& profile);
  explicit PluginHost(std::vector<std::filesystem::path> search_dirs);

  const std::vector<std::filesystem::path>& search_dirs() const { return search_dirs_; }

  /// Every libglmrt-*.so in the search path (first found wins per file name),
  /// including ones that fail to load (supported = false, reason says why).
  std::vector<PluginInfo> discover() const;

  /// Reads a plugin's descriptor and runs its probe (in a child process unless
  /// vouches_for() it); throws glmrt::Error naming the file when it is not a
  /// glmrt plugin, its descriptor is malformed, or its probe crashes or hangs.
  PluginInfo inspect(const std::filesystem::path& shared_object) const;

  /// True when `shared_object` lies in one of the own plugin folders (links
  /// resolved): it is then probed in this process.
  bool vouches_for(const std::filesystem::path& shared_object) const;

  /// Resolves a name ("kernels-scalar"), "auto" (kernels only) or a path to a
  /// file, checking kind, ABI and probe; errors name the file and mismatch
  /// (and, for a missing name, the folders searched).
  std::filesystem::path resolve(const PluginChoice& choice, glmrt_plugin_kind kind) const;

  /// With `formats`, `auto` passes over a plugin whose supports() refuses
  /// one of them (a named plugin is created whatever it supports: the
  /// caller says what is missing).
  PluginHandle<plugin::Kernels> create_kernels(
      const PluginChoice& choice, const HostServices& host,
      std::span<const glmrt_weight_format> formats = {}) const;
  PluginHandle<plugin::Io> create_io(const PluginChoice& choice, const HostServices& host) const;
  PluginHandle<plugin::Draft> create_draft(const PluginChoice& choice,
                                           const HostServices& host) const;

  /// Resolves and creates every plugin a profile names (the one `auto` falls
  /// back to included); throws with the profile's file:line of the offending
  /// key on the first failure.
  ProfilePlugins check_profile(const Profile& profile) const;

 private:
  std::vector<std::filesystem::path> search_dirs_;
  std::set<std::filesystem::path> vouched_dirs_;
  std::chrono::milliseconds probe_timeout_;
};

}  // namespace glmrt
