// Probing a plugin from a folder the host does not vouch for in a child
// process: the child loads the file, checks its descriptor and runs its
// probe, and sends what `glmrt plugins` lists over a pipe. A plugin that
// crashes (in a constructor, its entry point or its probe) or hangs takes the
// child down, never the host: it is refused with the signal or the timeout
// as the reason.
#pragma once

#include <glmrt/host/plugin_host.h>

#include <chrono>
#include <filesystem>

namespace glmrt {

/// What LoadedLibrary(file).describe() returns, worked out in a child
/// process; throws glmrt::Error naming the file when the child refuses the
/// plugin (the same message as in this process), is killed by a signal (named),
/// exits early, or has not answered within `timeout` (it is killed then).
PluginInfo probe_in_child(const std::filesystem::path& file, std::chrono::milliseconds timeout);

}  // namespace glmrt
