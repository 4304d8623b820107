// Finding plugins on the search path and turning a profile's choice into a
// checked, created plugin object.
#include "isolated_probe.h"
#include "loaded_library.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/base/warning.h>
#include <glmrt/host/plugin_host.h>

#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string_view>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFilePrefix = "libglmrt-";
constexpr std::string_view kFileSuffix = ".so";
constexpr const char* kProbeTimeoutVariable = "GLMRT_PLUGIN_PROBE_TIMEOUT";
constexpr double kDefaultProbeTimeoutSeconds = 10;

std::vector<fs::path> split_path_list(std::string_view list) {
  std::vector<fs::path> dirs;
  while (!list.empty()) {
    const size_t colon = list.find(':');
    std::string_view entry = list.substr(0, colon);
    if (!entry.empty()) dirs.emplace_back(entry);
    list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
  }
  return dirs;
}

/// The build's and the install's own plugin folders: plugins/ beside the
/// executable, then the install folder.
std::vector<fs::path> own_plugin_dirs() {
  std::vector<fs::path> dirs;
  boost::dll::fs::error_code ec;
  const boost::dll::fs::path exe = boost::dll::program_location(ec);
  if (!ec) dirs.push_back(fs::path(exe.parent_path().string()) / "plugins");
  dirs.emplace_back(GLMRT_INSTALL_PLUGIN_DIR);
  return dirs;
}

/// Search order of the design: the profile's folders, $GLMRT_PLUGIN_PATH,
/// then the own folders.
std::vector<fs::path> default_search_dirs(const Profile& profile) {
  std::vector<fs::path> dirs = profile.plugin_paths;
  if (const char* env = std::getenv("GLMRT_PLUGIN_PATH")) {
    for (fs::path& dir : split_path_list(env)) dirs.push_back(std::move(dir));
  }
  for (fs::path& dir : own_plugin_dirs()) dirs.push_back(std::move(dir));
  return dirs;
}

/// The folders whose plugins are probed in this process: the own ones, as
/// the file system resolves them (a link elsewhere is not vouched for).
std::set<fs::path> vouched_dirs() {
  std::set<fs::path> dirs;
  for (const fs::path& dir : own_plugin_dirs()) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(fs::absolute(dir), ec);
    if (!ec) dirs.insert(real);
  }
  return dirs;
}

/// $GLMRT_PLUGIN_PROBE_TIMEOUT (seconds), else 10 s: how long a probe in a
/// child process may take before the plugin is refused as hanging.
std::chrono::milliseconds probe_timeout() {
  const char* text = std::getenv(kProbeTimeoutVariable);
  double seconds = kDefaultProbeTimeoutSeconds;
  if (text) {
    char* end = nullptr;
    seconds = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(seconds >= 0.001 && seconds <= 3600))
      fail("${}: expected a number of seconds from 0.001 to 3600, found `{}`",
           kProbeTimeoutVariable, printable(text, 64));
  }
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

/// Drops repeated folders (the same folder named twice is searched once).
std::vector<fs::path> unique_dirs(std::vector<fs::path> dirs) {
  std::vector<fs::path> unique;
  std::set<fs::path> seen;
  for (fs::path& dir : dirs) {
    fs::path normal = fs::absolute(dir).lexically_normal();
    if (seen.insert(normal).second) unique.push_back(std::move(normal));
  }
  return unique;
}

bool looks_like_path(const std::string& name) {
  return name.find('/') != std::string::npos ||
         (name.size() > kFileSuffix.size() && name.ends_with(kFileSuffix));
}

std::string file_name_of(const std::string& plugin_name) {
  return fmt::format("{}{}{}", kFilePrefix, plugin_name, kFileSuffix);
}

std::string join_dirs(const std::vector<fs::path>& dirs) {
  std::string joined;
  for (const fs::path& dir : dirs)
    joined += fmt::format("{}{}", joined.empty() ? "" : ", ", printable(dir.string()));
  return joined.empty() ? "(no folders)" : joined;
}

/// Runs `body`; errors are prefixed with where the profile chose the plugin.
template <typename Body>
auto with_origin(const PluginChoice& choice, glmrt_plugin_kind kind, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    if (choice.origin.empty()) throw;
    throw Error(
        fmt::format("{}: key `plugins.{}`: {}", choice.origin, plugin_kind_name(kind), e.what()));
  }
}

/// Loads `file` as a plugin of `kind` that this machine supports. One from a
/// folder the host does not vouch for is probed in a child process first:
/// a crash or a hang there refuses it before it is loaded here.
std::shared_ptr<LoadedLibrary> open_checked(const PluginHost& host, const fs::path& file,
                                            glmrt_plugin_kind kind) {
  if (!host.vouches_for(file)) host.inspect(file);
  auto library = std::make_shared<LoadedLibrary>(file);
  library->require_kind(kind);
  PluginInfo info = library->describe();
  if (!info.supported)
    fail("{}: plugin `{}` is not supported on this CPU: {}", printable(file.string()), info.name,
         info.reason.empty() ? "its probe gave no reason" : info.reason);
  return library;
}

std::shared_ptr<LoadedLibrary> open_choice(const PluginHost& host, const PluginChoice& choice,
                                           glmrt_plugin_kind kind) {
  return open_checked(host, host.resolve(choice, kind), kind);
}

// A plugin built against a newer minor of the ABI runs (interfaces only grow
// at their end), but what it added is invisible to this host: say so.
void warn_if_newer_minor(const PluginInfo& info, const LoadedLibrary& library) {
  if (library.descriptor().abi_minor > GLMRT_ABI_MINOR)
    warn(
        "{}: plugin `{}` was built for ABI {}, newer than this glmrt's {}.{}: it runs, but "
        "whatever its ABI added after {}.{} is not used (update glmrt to use it)",
        printable(info.path.string()), info.name, info.abi, GLMRT_ABI_MAJOR, GLMRT_ABI_MINOR,
        GLMRT_ABI_MAJOR, GLMRT_ABI_MINOR);
}

template <typename Interface>
PluginHandle<Interface> create_from(std::shared_ptr<LoadedLibrary> library,
                                    const PluginChoice& choice, const HostServices& services) {
  PluginInfo info = library->describe();
  warn_if_newer_minor(info, *library);
  auto* object = static_cast<Interface*>(library->create(services, choice.settings));
  return PluginHandle<Interface>(std::move(library), object, std::move(info));
}

template <typename Interface>
PluginHandle<Interface> create_handle(const PluginHost& host, const PluginChoice& choice,
                                      glmrt_plugin_kind kind, const HostServices& services) {
  return with_origin(choice, kind, [&] {
    return create_from<Interface>(open_choice(host, choice, kind), choice, services);
  });
}

/// Supported kernels plugins of the search path, best score first (the
/// search order breaks ties).
std::vector<PluginInfo> kernels_by_score(const std::vector<PluginInfo>& found,
                                         std::string& rejected) {
  std::vector<PluginInfo> candidates;
  for (const PluginInfo& info : found) {
    if (info.kind != "kernels") continue;
    if (!info.supported) {
      rejected +=
          fmt::format("; {} ({}): {}", info.name, printable(info.path.string()), info.reason);
      continue;
    }
    candidates.push_back(info);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const PluginInfo& a, const PluginInfo& b) { return a.score > b.score; });
  return candidates;
}

}  // namespace

PluginHost::PluginHost(const Profile& profile)
    : search_dirs_(unique_dirs(default_search_dirs(profile))),
      vouched_dirs_(vouched_dirs()),
      probe_timeout_(probe_timeout()) {}

PluginHost::PluginHost(std::vector<fs::path> search_dirs)
    : search_dirs_(unique_dirs(std::move(search_dirs))),
      vouched_dirs_(vouched_dirs()),
      probe_timeout_(probe_timeout()) {}

bool PluginHost::vouches_for(const fs::path& shared_object) const {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(shared_object), ec);
  return !ec && vouched_dirs_.contains(real.parent_path());
}

PluginInfo PluginHost::inspect(const fs::path& shared_object) const {
  if (!vouches_for(shared_object)) return probe_in_child(shared_object, probe_timeout_);
  return LoadedLibrary(shared_object).describe();
}

std::vector<PluginInfo> PluginHost::discover() const {
  std::vector<PluginInfo> found;
  std::set<std::string> seen_names;
  for (const fs::path& dir : search_dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with(kFilePrefix) && name.ends_with(kFileSuffix))
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      if (!seen_names.insert(file.filename().string()).second) continue;
      try {
        found.push_back(inspect(file));
      } catch (const Error& e) {
        PluginInfo broken;
        broken.path = file;
        const std::string stem = file.filename().string();
        broken.name = printable(
            stem.substr(kFilePrefix.size(), stem.size() - kFilePrefix.size() - kFileSuffix.size()));
        broken.kind = "?";
        broken.reason = e.what();
        found.push_back(std::move(broken));
      }
    }
  }
  return found;
}

fs::path PluginHost::resolve(const PluginChoice& choice, glmrt_plugin_kind kind) const {
  if (choice.name == "auto") {
    if (kind != GLMRT_PLUGIN_KERNELS)
      fail("`auto` chooses among kernels plugins only; name the {} plugin", plugin_kind_name(kind));
    std::string rejected;
    const std::vector<PluginInfo> candidates = kernels_by_score(discover(), rejected);
    if (candidates.empty())
      fail("`auto` found no kernels plugin this CPU supports; searched: {}{}",
           join_dirs(search_dirs_), rejected);
    open_checked(*this, candidates.front().path, kind);
    return candidates.front().path;
  }
  if (looks_like_path(choice.name)) {
    const fs::path file(choice.name);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) fail("{}: plugin file not found", printable(file.string()));
    open_checked(*this, file, kind);
    return file;
  }
  const std::string file_name = file_name_of(choice.name);
  for (const fs::path& dir : search_dirs_) {
    const fs::path file = dir / file_name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    open_checked(*this, file, kind);
    return file;
  }
  fail(
      "{} plugin `{}` not found: no {} in the folders searched: {} (add a folder to the "
      "profile's plugin_paths or to GLMRT_PLUGIN_PATH)",
      plugin_kind_name(kind), printable(choice.name), printable(file_name),
      join_dirs(search_dirs_));
}

namespace {

/// "int4-g64", for messages.
std::string format_name(const glmrt_weight_format& f) {
  const char* type = plugin::element_type_name(f.element_type);
  std::string name = type ? type : fmt::format("element type {}", f.element_type);
  return f.group_size ? fmt::format("{}-g{}", name, f.group_size) : name;
}

/// The first format `kernels` (of ABI minor `abi_minor`) refuses, if any. A
/// plugin is asked only about formats its minor defines: ggml blocks (1.5)
/// are refused for an older one unasked.
std::optional<std::string> refused_format(const plugin::Kernels& kernels, int abi_minor,
                                          std::span<const glmrt_weight_format> formats) {
  for (const glmrt_weight_format& f : formats) {
    if (plugin::is_ggml_blocks(f.element_type) && abi_minor < GLMRT_ABI_MINOR_GGML_TYPES)
      return format_name(f);
    if (!kernels.supports(f)) return format_name(f);
  }
  return std::nullopt;
}

}  // namespace

PluginHandle<plugin::Kernels> PluginHost::create_kernels(
    const PluginChoice& choice, const HostServices& host,
    std::span<const glmrt_weight_format> formats) const {
  if (choice.name != "auto")
    return create_handle<plugin::Kernels>(*this, choice, GLMRT_PLUGIN_KERNELS, host);
  // `auto` falls back down the scores: the best plugin may load and probe
  // fine yet fail to create (a device it needs is busy, its settings differ).
  return with_origin(choice, GLMRT_PLUGIN_KERNELS, [&] {
    std::string rejected;
    const std::vector<PluginInfo> candidates = kernels_by_score(discover(), rejected);
    if (candidates.empty())
      fail("`auto` found no kernels plugin this CPU supports; searched: {}{}",
           join_dirs(search_dirs_), rejected);
    std::string failures;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const PluginInfo& candidate = candidates[i];
      try {
        auto kernels = create_from<plugin::Kernels>(
            open_checked(*this, candidate.path, GLMRT_PLUGIN_KERNELS), choice, host);
        if (const auto refused = refused_format(*kernels, candidate.abi_minor, formats)) {
          failures += fmt::format("; `{}` does not support {} weights", candidate.name, *refused);
          if (i + 1 < candidates.size())
            note(
                "kernels `auto`: plugin `{}` (score {}) does not support {} weights, which this "
                "run uses; trying `{}` (score {})",
                candidate.name, candidate.score, *refused, candidates[i + 1].name,
                candidates[i + 1].score);
          continue;
        }
        return kernels;
      } catch (const Error& e) {
        failures += fmt::format("; {}", e.what());
        if (i + 1 < candidates.size())
          warn("kernels `auto`: plugin `{}` (score {}) failed, falling back to `{}` (score {}): {}",
               candidate.name, candidate.score, candidates[i + 1].name, candidates[i + 1].score,
               e.what());
      }
    }
    fail("`auto`: no kernels plugin could be created{}", failures);
  });
}

PluginHandle<plugin::Io> PluginHost::create_io(const PluginChoice& choice,
                                               const HostServices& host) const {
  return create_handle<plugin::Io>(*this, choice, GLMRT_PLUGIN_IO, host);
}

PluginHandle<plugin::Draft> PluginHost::create_draft(const PluginChoice& choice,
                                                     const HostServices& host) const {
  return create_handle<plugin::Draft>(*this, choice, GLMRT_PLUGIN_DRAFT, host);
}

ProfilePlugins PluginHost::check_profile(const Profile& profile) const {
  // Creating each plugin once also makes it check its settings, so a typo in
  // `settings:` fails here and not halfway through loading a model.
  MemoryBudget budget;
  HostServices services(budget, 1);
  ProfilePlugins plugins;
  plugins.kernels = create_kernels(profile.kernels, services).info();
  plugins.io = create_io(profile.io, services).info();
  if (profile.draft) plugins.draft = create_draft(*profile.draft, services).info();
  return plugins;
}

}  // namespace glmrt
